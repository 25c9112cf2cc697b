import StoreGateCore

/// The SQL expressions both backends keep `ledger_activity_days` with (schema 15): a time's day
/// number, the days a subscription transaction is `active` over (``ActivityTally``'s day
/// arithmetic), and an event type's kind. The backends differ only in their dialect's minimum
/// of two values and in how a boolean column is tested; each writes its own triggers around
/// these.
package struct ActivityDayExpressions: Sendable {
    /// The dialect's minimum of two values (`MIN` in SQLite, `LEAST` in PostgreSQL).
    let least: String
    /// Whether the column `is_upgraded` of a row alias is false: `= 0` in SQLite (an integer),
    /// `NOT` in PostgreSQL (a boolean).
    let notUpgraded: @Sendable (String) -> String

    package static let sqlite = ActivityDayExpressions(least: "MIN") { "\($0).is_upgraded = 0" }
    package static let postgres = ActivityDayExpressions(least: "LEAST") { "NOT \($0).is_upgraded" }

    private static let dayLength = BrowsingQuery.millisecondsPerDay

    /// The day number of the time `x` (milliseconds): ⌊x / day⌋ in integer arithmetic (both
    /// dialects' `/` truncates toward zero).
    package func day(_ x: String) -> String {
        let length = Self.dayLength
        return "((\(x)) - ((((\(x)) % \(length)) + \(length)) % \(length))) / \(length)"
    }

    /// ⌈x / day⌉ − 1: the first day whose end is at or after `x`.
    private func firstDayEndingFrom(_ x: String) -> String {
        let length = Self.dayLength
        return "((\(x)) + (\(length) - (\(x)) % \(length)) % \(length)) / \(length) - 1"
    }

    /// The first day whose end the transaction `row` covers.
    package func firstDay(_ row: String) -> String { firstDayEndingFrom("\(row).purchase_date") }

    /// The first day whose end the transaction `row` no longer covers (its expiry, or its
    /// revocation when earlier).
    package func lastDay(_ row: String) -> String {
        firstDayEndingFrom("\(least)(\(row).expires_date, COALESCE(\(row).revocation_date, \(row).expires_date))")
    }

    /// Whether the transaction `row` counts as active at some day's end: auto-renewable, not
    /// upgraded, with an expiry after its first day's end.
    package func counted(_ row: String) -> String {
        """
        (\(row).product_type = '\(ProductType.autoRenewable.rawValue)' AND \(notUpgraded(row)) \
        AND \(row).expires_date IS NOT NULL AND \(firstDay(row)) < \(lastDay(row)))
        """
    }

    /// The counted event types, as a list of SQL strings (for `type IN (…)`).
    package static let countedTypes = ActivityTally.countedTypes.map { "'\($0.rawValue)'" }.joined(separator: ", ")

    /// The kind an event of type `type` (an expression) counts under.
    package static func kind(_ type: String) -> String {
        let cases = ActivityTally.countedTypes.compactMap { type in
            ActivityKind(counting: type).map { "WHEN '\(type.rawValue)' THEN '\($0.rawValue)'" }
        }
        return "CASE \(type) \(cases.joined(separator: " ")) END"
    }

    /// The columns a transaction's `active` contribution depends on (what an update trigger
    /// watches).
    package static let subscriptionColumns = ["product_type", "is_upgraded", "purchase_date", "expires_date", "revocation_date"]
}

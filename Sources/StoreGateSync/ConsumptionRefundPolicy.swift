public import StoreGateAppStoreClient
public import StoreGateCore

/// Chooses the refund preference told to Apple for each consumption request, from a few
/// ordered rules (`STOREGATE_CONSUMPTION_REFUND_POLICY`), as hosted purchase platforms' refund
/// controls do.
///
/// A policy is a list of rules separated by `;` (or new lines). A rule is conditions joined
/// by `&`, a `:`, and a preference; `*` alone matches every request. The first rule whose
/// conditions all hold decides; when none does, the fixed preference
/// (`STOREGATE_CONSUMPTION_REFUND_PREFERENCE`) applies.
///
/// ```
/// consumed>=80%:decline; age<7d:grant_full; consumed>0%:grant_prorated; *:grant_full
/// ```
///
/// | condition | holds when |
/// |---|---|
/// | `consumed OP N%` | the requested purchase's consumed share compares so (N: 0 to 100, up to 3 decimals) |
/// | `age OP N(d\|h)` | the account's age, from its first purchase to the answer, compares so (days or hours) |
/// | `type=T`, `type!=T` | the product is (not) of type T: `consumable`, `non_consumable`, `non_renewing`, `auto_renewable` |
/// | `delivered=yes\|no` | the ledger recorded the purchase for an account (StoreGate's `deliveryStatus`) |
///
/// `OP` is one of `<`, `<=`, `>`, `>=`, `=`, `!=`. Preferences are `decline`, `grant_full`,
/// `grant_prorated` and `none` (state no preference). A condition about something the ledger
/// does not know (the consumed share of a non-consumable or an auto-renewable subscription,
/// the age of an account that never presented a purchase) does not hold. Whatever the rule
/// chooses, the answer still meets Apple's rules: a `GRANT_PRORATED` Apple would refuse is
/// replaced by the nearest preference it takes, and the request's status says so.
public struct ConsumptionRefundPolicy: Sendable, Hashable, CustomStringConvertible {
    /// How a condition compares.
    public enum Comparison: String, Sendable, Hashable, CaseIterable {
        case less = "<"
        case lessOrEqual = "<="
        case greater = ">"
        case greaterOrEqual = ">="
        case equal = "="
        case notEqual = "!="

        /// Whether `lhs OP rhs`.
        func holds<T: Comparable>(_ lhs: T, _ rhs: T) -> Bool {
            switch self {
            case .less: lhs < rhs
            case .lessOrEqual: lhs <= rhs
            case .greater: lhs > rhs
            case .greaterOrEqual: lhs >= rhs
            case .equal: lhs == rhs
            case .notEqual: lhs != rhs
            }
        }
    }

    /// One condition of a rule.
    public enum Condition: Sendable, Hashable, CustomStringConvertible {
        /// The requested purchase's consumed share, in milliunits (`consumed>=50%` is 50,000).
        case consumed(Comparison, milliunits: Int)
        /// The account's age, from its first purchase to the answer, in seconds.
        case accountAge(Comparison, seconds: Int64)
        /// The product's type is (`true`) or is not (`false`) the given one.
        case productType(equals: Bool, ProductType)
        /// The purchase was (`true`) or was not (`false`) delivered.
        case delivered(Bool)

        /// Whether the condition holds for `request`.
        func holds(for request: Case) -> Bool {
            switch self {
            case .consumed(let comparison, let milliunits):
                guard let share = request.consumptionPercentage else { return false }
                return comparison.holds(share, milliunits)
            case .accountAge(let comparison, let seconds):
                guard let age = request.accountAge else { return false }
                return comparison.holds(age.components.seconds, seconds)
            case .productType(let equal, let type):
                guard let known = request.productType else { return false }
                return (known == type) == equal
            case .delivered(let delivered):
                return request.isDelivered == delivered
            }
        }

        /// The condition as it is written.
        public var description: String {
            switch self {
            case .consumed(let comparison, let milliunits):
                let whole = milliunits / 1000, part = milliunits % 1000
                var fraction = part == 0 ? "" : "." + String(String(part + 1000).dropFirst())
                while fraction.hasSuffix("0") { fraction.removeLast() }
                return "consumed\(comparison.rawValue)\(whole)\(fraction)%"
            case .accountAge(let comparison, let seconds):
                return seconds % 86_400 == 0 ? "age\(comparison.rawValue)\(seconds / 86_400)d" : "age\(comparison.rawValue)\(seconds / 3600)h"
            case .productType(let equal, let type):
                let name = ConsumptionRefundPolicy.typeNames.first { $0.value == type }?.key ?? type.rawValue
                return "type\(equal ? "=" : "!=")\(name)"
            case .delivered(let delivered):
                return "delivered=\(delivered ? "yes" : "no")"
            }
        }
    }

    /// One rule: when every condition holds (always, with none), `preference`.
    public struct Rule: Sendable, Hashable, CustomStringConvertible {
        /// The conditions, all of which must hold; empty for `*`.
        public var conditions: [Condition]
        /// The preference chosen; `nil` states none.
        public var preference: ConsumptionInformation.RefundPreference?

        /// Creates a rule.
        public init(_ conditions: [Condition], _ preference: ConsumptionInformation.RefundPreference?) {
            self.conditions = conditions
            self.preference = preference
        }

        /// The rule as it is written (`consumed>=50%&age>=30d:decline`).
        public var description: String {
            let when = conditions.isEmpty ? "*" : conditions.map(\.description).joined(separator: "&")
            return when + ":" + (preference.map { $0.rawValue.lowercased() } ?? "none")
        }
    }

    /// What the policy is asked about: one consumption request.
    public struct Case: Sendable, Hashable {
        /// The product's type, when known.
        public var productType: ProductType?
        /// Whether the purchase was delivered (recorded for an account).
        public var isDelivered: Bool
        /// The requested purchase's consumed share in milliunits, when known.
        public var consumptionPercentage: Int?
        /// The account's age at the answer, when known.
        public var accountAge: Duration?

        /// Creates a case.
        public init(productType: ProductType?, isDelivered: Bool, consumptionPercentage: Int?, accountAge: Duration?) {
            self.productType = productType
            self.isDelivered = isDelivered
            self.consumptionPercentage = consumptionPercentage
            self.accountAge = accountAge
        }
    }

    /// The rules, first match wins.
    public var rules: [Rule]

    /// The longest policy text read (a configuration value, not a program).
    public static let maximumLength = 4096
    /// The most rules a policy has.
    public static let maximumRules = 64

    /// Creates a policy from its rules.
    public init(rules: [Rule]) {
        self.rules = rules
    }

    /// Reads a policy written in the rule syntax (see the type's discussion).
    ///
    /// - Throws: ``SyncError/Code/invalidRefundPolicy`` naming the rule and what is wrong with it.
    public init(parsing text: String) throws(SyncError) {
        guard text.utf8.count <= Self.maximumLength else {
            throw SyncError(.invalidRefundPolicy, "the policy is longer than \(Self.maximumLength) bytes")
        }
        let written = text.split(whereSeparator: { $0 == ";" || $0 == "\n" }).map { $0.trimmingSpaces }.filter { !$0.isEmpty }
        guard !written.isEmpty else { throw SyncError(.invalidRefundPolicy, "the policy has no rule") }
        guard written.count <= Self.maximumRules else {
            throw SyncError(.invalidRefundPolicy, "the policy has more than \(Self.maximumRules) rules")
        }
        var rules: [Rule] = []
        for (index, text) in written.enumerated() {
            do throws(SyncError) {
                rules.append(try Self.rule(text))
            } catch {
                throw SyncError(.invalidRefundPolicy, "rule \(index + 1) '\(text)': \(error.reason)")
            }
        }
        self.rules = rules
    }

    /// The first rule that holds for `request`, `nil` when none does.
    public func rule(for request: Case) -> Rule? {
        rules.first { rule in rule.conditions.allSatisfy { $0.holds(for: request) } }
    }

    /// The policy as it is written, rules separated by `; `.
    public var description: String { rules.map(\.description).joined(separator: "; ") }

    // MARK: Parsing

    /// The type names a `type` condition takes.
    static let typeNames: KeyValuePairs<String, ProductType> = [
        "consumable": .consumable, "non_consumable": .nonConsumable, "non_renewing": .nonRenewing, "auto_renewable": .autoRenewable,
    ]

    /// One rule: `conditions:preference`.
    private static func rule(_ text: String) throws(SyncError) -> Rule {
        let parts = text.split(separator: ":", omittingEmptySubsequences: false).map { String($0).trimmingSpaces }
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else {
            throw SyncError(.invalidRefundPolicy, "a rule is conditions, ':' and a preference")
        }
        let preference: ConsumptionInformation.RefundPreference?
        switch parts[1].lowercased() {
        case "none": preference = nil
        case let name:
            guard let known = ConsumptionInformation.RefundPreference(rawValue: name.uppercased()) else {
                throw SyncError(.invalidRefundPolicy, "'\(parts[1])' is not decline, grant_full, grant_prorated or none")
            }
            preference = known
        }
        if parts[0] == "*" { return Rule([], preference) }
        var conditions: [Condition] = []
        for written in parts[0].split(separator: "&", omittingEmptySubsequences: false).map({ String($0).trimmingSpaces }) {
            conditions.append(try condition(written))
        }
        return Rule(conditions, preference)
    }

    /// One condition: `subject OP value`.
    private static func condition(_ text: String) throws(SyncError) -> Condition {
        let subjectEnd = text.firstIndex { !($0.isLetter || $0 == "_") } ?? text.endIndex
        let subject = text[..<subjectEnd].lowercased()
        var rest = text[subjectEnd...].drop { $0 == " " }
        guard let comparison = Comparison.allCases.sorted(by: { $0.rawValue.count > $1.rawValue.count }).first(where: { rest.hasPrefix($0.rawValue) }) else {
            throw SyncError(.invalidRefundPolicy, "'\(text)' is not a condition such as consumed>=50%, age<30d, type=consumable or delivered=no")
        }
        rest = rest.dropFirst(comparison.rawValue.count).drop { $0 == " " }
        let value = String(rest).lowercased()
        switch subject {
        case "consumed":
            guard let milliunits = percentage(value) else {
                throw SyncError(.invalidRefundPolicy, "'\(rest)' is not a share from 0% to 100% (up to 3 decimals)")
            }
            return .consumed(comparison, milliunits: milliunits)
        case "age":
            guard let seconds = age(value) else {
                throw SyncError(.invalidRefundPolicy, "'\(rest)' is not an age in days or hours such as 30d or 12h")
            }
            return .accountAge(comparison, seconds: seconds)
        case "type":
            guard comparison == .equal || comparison == .notEqual else { throw SyncError(.invalidRefundPolicy, "a type is compared with = or !=") }
            guard let type = typeNames.first(where: { $0.key == value })?.value else {
                throw SyncError(.invalidRefundPolicy, "'\(rest)' is not consumable, non_consumable, non_renewing or auto_renewable")
            }
            return .productType(equals: comparison == .equal, type)
        case "delivered":
            guard comparison == .equal || comparison == .notEqual, value == "yes" || value == "no" else {
                throw SyncError(.invalidRefundPolicy, "delivery is delivered=yes or delivered=no")
            }
            return .delivered((value == "yes") == (comparison == .equal))
        default:
            throw SyncError(.invalidRefundPolicy, "'\(subject)' is not consumed, age, type or delivered")
        }
    }

    /// `37.5%` as 37,500 milliunits; `nil` unless 0% to 100% with up to 3 decimals.
    private static func percentage(_ text: String) -> Int? {
        guard text.hasSuffix("%") else { return nil }
        let number = text.dropLast()
        let pieces = number.split(separator: ".", omittingEmptySubsequences: false)
        guard (1...2).contains(pieces.count), let whole = digits(pieces[0], limit: 3) else { return nil }
        var milliunits = whole * 1000
        if pieces.count == 2 {
            guard (1...3).contains(pieces[1].count), let fraction = digits(pieces[1], limit: 3) else { return nil }
            milliunits += fraction * [100, 10, 1][pieces[1].count - 1]
        }
        return milliunits <= 100_000 ? milliunits : nil
    }

    /// `30d` or `12h` in seconds; `nil` otherwise (at most 100 years).
    private static func age(_ text: String) -> Int64? {
        guard let unit = text.last, unit == "d" || unit == "h", let count = digits(text.dropLast(), limit: 6) else { return nil }
        let seconds = Int64(count) * (unit == "d" ? 86_400 : 3600)
        return seconds <= 100 * 366 * 86_400 ? seconds : nil
    }

    /// An unsigned decimal of 1 to `limit` digits.
    private static func digits(_ text: Substring, limit: Int) -> Int? {
        guard (1...limit).contains(text.count), text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(text)
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    fileprivate var trimmingSpaces: String {
        let blank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        return String(self.drop(while: blank).reversed().drop(while: blank).reversed())
    }
}

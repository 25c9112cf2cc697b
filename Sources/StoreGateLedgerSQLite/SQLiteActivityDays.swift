import StoreGateCore
import StoreGateLedger

/// The console overview's per-day counts (schema 15): `ledger_activity_days (day, kind, count)`.
///
/// A row holds, for one UTC day (days since 1970-01-01), either the events of a counted type
/// recorded that day (`purchases`, `renewals`, `refunds`) or the change that day of the number
/// of auto-renewable, not upgraded transactions covering a day's end (`active`: +1 on the first
/// day whose end a transaction covers, −1 on the first whose end it no longer does — the day
/// arithmetic of ``ActivityTally``). `activity(days:endingAt:)` reads the window's rows and one
/// sum of the `active` changes before it: bounded by the ledger's age in days, not its size.
///
/// Triggers keep the counts in the statement that changes a row, so in the same transaction,
/// on every write path at once (recording, notifications, the clock, bulk recording, transfers,
/// retention's deletions, the migration's own fill): inserting or deleting a counted event adds
/// or subtracts 1 on its day; inserting, updating or deleting a transaction moves its `active`
/// contribution from the old row's days to the new row's. Events are never updated.
enum SQLiteActivityDays {
    private static let sql = ActivityDayExpressions.sqlite
    private static let countedTypes = ActivityDayExpressions.countedTypes

    /// Adds the (day, kind, change) rows `changes` selects (columns `d`, `k`, `n`), summed per
    /// day and kind; sums of zero are not written.
    private static func add(_ changes: String) -> String {
        """
        INSERT INTO ledger_activity_days (day, kind, count)
            SELECT d, k, SUM(n) FROM (\(changes)) WHERE true GROUP BY d, k HAVING SUM(n) <> 0
            ON CONFLICT (day, kind) DO UPDATE SET count = count + excluded.count
        """
    }

    /// The `active` changes of transaction `row` (`OLD`, `NEW` or a table's alias), times `sign`.
    private static func activeChanges(_ row: String, sign: Int, from table: String? = nil) -> String {
        let from = table.map { " FROM \($0) \(row)" } ?? ""
        return """
            SELECT \(sql.firstDay(row)) AS d, 'active' AS k, \(sign) AS n\(from) WHERE \(sql.counted(row)) \
            UNION ALL SELECT \(sql.lastDay(row)), 'active', \(-sign)\(from) WHERE \(sql.counted(row))
            """
    }

    /// The event-count change of event `row`, times `sign`.
    private static func eventChanges(_ row: String, sign: Int, from table: String? = nil) -> String {
        let from = table.map { " FROM \($0) \(row)" } ?? ""
        return "SELECT \(sql.day("\(row).recorded_at")) AS d, \(ActivityDayExpressions.kind("\(row).type")) AS k, \(sign) AS n\(from) WHERE \(row).type IN (\(countedTypes))"
    }

    private static let subscriptionColumns = ActivityDayExpressions.subscriptionColumns

    /// Migration 15: the table, its fill from the stored events and transactions (what
    /// `activity` computed from them before), and the triggers that keep it.
    static let migration: [String] = [
        """
        CREATE TABLE ledger_activity_days (
            day INTEGER NOT NULL,
            kind TEXT NOT NULL,
            count INTEGER NOT NULL,
            PRIMARY KEY (day, kind)
        ) WITHOUT ROWID
        """,
        add(eventChanges("e", sign: 1, from: "ledger_events") + " UNION ALL " + activeChanges("t", sign: 1, from: "ledger_transactions")),
        """
        CREATE TRIGGER ledger_activity_event_inserted AFTER INSERT ON ledger_events WHEN NEW.type IN (\(countedTypes))
        BEGIN \(add(eventChanges("NEW", sign: 1))); END
        """,
        """
        CREATE TRIGGER ledger_activity_event_deleted AFTER DELETE ON ledger_events WHEN OLD.type IN (\(countedTypes))
        BEGIN \(add(eventChanges("OLD", sign: -1))); END
        """,
        """
        CREATE TRIGGER ledger_activity_transaction_inserted AFTER INSERT ON ledger_transactions WHEN \(sql.counted("NEW"))
        BEGIN \(add(activeChanges("NEW", sign: 1))); END
        """,
        """
        CREATE TRIGGER ledger_activity_transaction_updated AFTER UPDATE OF \(subscriptionColumns.joined(separator: ", ")) ON ledger_transactions
        WHEN (\(subscriptionColumns.map { "OLD.\($0) IS NOT NEW.\($0)" }.joined(separator: " OR ")))
        BEGIN \(add(activeChanges("OLD", sign: -1) + " UNION ALL " + activeChanges("NEW", sign: 1))); END
        """,
        """
        CREATE TRIGGER ledger_activity_transaction_deleted AFTER DELETE ON ledger_transactions WHEN \(sql.counted("OLD"))
        BEGIN \(add(activeChanges("OLD", sign: -1))); END
        """,
    ]

    /// The triggers that keep the counts (``migration``), by name.
    static let triggers = [
        "ledger_activity_event_inserted", "ledger_activity_event_deleted", "ledger_activity_transaction_inserted",
        "ledger_activity_transaction_updated", "ledger_activity_transaction_deleted",
    ]

    /// Fills `tally` from the window's rows and the sum of the `active` changes before it.
    static func tally(_ connection: SQLiteConnection, into tally: inout ActivityTally) throws(LedgerError) {
        let first = tally.firstDayNumber
        try connection.query(
            "SELECT COALESCE(SUM(count), 0) FROM ledger_activity_days WHERE day < ? AND kind = ?",
            [.integer(first), .text(ActivityKind.active.rawValue)]
        ) { row throws(LedgerError) in
            tally.addActiveBeforeWindow(Int(row.integer(0)))
        }
        var unknown: String?
        try connection.query(
            "SELECT day, kind, count FROM ledger_activity_days WHERE day >= ? AND day < ?",
            [.integer(first), .integer(tally.endDayNumber)]
        ) { row throws(LedgerError) in
            guard let kind = ActivityKind(rawValue: row.text(1)) else {
                unknown = row.text(1)
                return
            }
            tally.add(kind, day: row.integer(0), count: Int(row.integer(2)))
        }
        if let unknown {
            throw LedgerError(.storage, reason: "ledger_activity_days holds an unknown kind '\(unknown)'")
        }
    }
}

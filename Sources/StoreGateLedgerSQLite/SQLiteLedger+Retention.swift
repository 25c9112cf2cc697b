public import Foundation
import StoreGateCore
public import StoreGateLedger

/// Event retention in the SQLite file (schema 8): the oldest events deleted in one write
/// transaction, `ledger_event_index.pruned_through` saying how far.
extension SQLiteLedger {
    /// The largest sequence SQLite stores: "no bound" in the queries below.
    private static let unbounded = SQLiteValue.integer(Int64.max)

    @discardableResult
    public func pruneEvents(recordedBefore cutoff: Date, limit: Int) async throws(LedgerError) -> EventPruning {
        try LedgerPlanner.checkPruneLimit(limit)
        return try await write { connection throws(LedgerError) -> EventPruning in
            var pruned: Int64 = 0
            var bound: Int64 = 0
            // Not the newest (the trigger refuses it anyway), not past an endpoint's fan-out
            // cursor, not up to a delivery still owed (the status index answers both minimums).
            try connection.query(
                """
                SELECT pruned_through, MIN(
                    (SELECT COALESCE(MAX(sequence), 0) FROM ledger_events) - 1,
                    pruned_through + ?1,
                    COALESCE((SELECT MIN(sequence) FROM ledger_webhook_cursors), ?2),
                    COALESCE((SELECT MIN(sequence) FROM ledger_deliveries WHERE status IN ('pending', 'failed')), ?2) - 1)
                FROM ledger_event_index WHERE singleton = 1
                """,
                [.integer(Int64(limit)), Self.unbounded]
            ) { row throws(LedgerError) in
                pruned = row.integer(0)
                bound = row.integer(1)
            }
            guard bound > pruned else { return EventPruning(deleted: 0, prunedThrough: pruned) }
            // Only a prefix: up to the first event in range recorded at or after the cutoff.
            var through = bound
            try connection.query(
                "SELECT MIN(sequence) FROM ledger_events WHERE sequence > ?1 AND sequence <= ?2 AND recorded_at >= ?3",
                [.integer(pruned), .integer(bound), .integer(cutoff.ledgerMilliseconds)]
            ) { row throws(LedgerError) in
                if let young = row.optionalInteger(0) { through = young - 1 }
            }
            guard through > pruned else { return EventPruning(deleted: 0, prunedThrough: pruned) }
            let range: [SQLiteValue] = [.integer(pruned), .integer(through)]
            try connection.run(
                """
                DELETE FROM ledger_event_accounts WHERE (account_id, sequence) IN (
                    SELECT account_id, sequence FROM ledger_events WHERE sequence > ?1 AND sequence <= ?2)
                """,
                range
            )
            // All delivered (checked above, in this write transaction); every status named for the index.
            try connection.run("DELETE FROM ledger_deliveries WHERE status IN ('pending', 'delivered', 'failed') AND sequence > ?1 AND sequence <= ?2", range)
            let deleted = try connection.run("DELETE FROM ledger_events WHERE sequence > ?1 AND sequence <= ?2", range)
            try connection.run("UPDATE ledger_event_index SET pruned_through = ? WHERE singleton = 1", [.integer(through)])
            return EventPruning(deleted: deleted, prunedThrough: through)
        }
    }

    /// How far retention deleted events (read in the caller's transaction).
    static func prunedThrough(_ connection: SQLiteConnection) throws(LedgerError) -> Int64 {
        var through: Int64 = 0
        try connection.query("SELECT pruned_through FROM ledger_event_index WHERE singleton = 1") { row throws(LedgerError) in
            through = row.integer(0)
        }
        return through
    }
}

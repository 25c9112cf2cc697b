public import Foundation
import Logging
import PostgresNIO
public import StoreGateLedger

/// Leased states in PostgreSQL (schema 5), shared by every instance. Taking a lease is one
/// upsert whose update applies only when the lease is free, ran out or is the taker's own:
/// concurrent takers serialize on the row, and exactly one of them gets it.
extension PostgresLedger {
    public func acquireLease(on name: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> LeasedState? {
        try LedgerPlanner.checkLeaseArguments(name: name, holder: holder)
        let logger = self.logger
        let now = now.ledgerMilliseconds
        let until = now + Int64(lease.seconds * 1000)
        return try await withConnection { connection in
            let rows = try await Self.rows(connection, """
                INSERT INTO ledger_leased_states AS s (name, holder, lease_until) VALUES ($1, $2, $3)
                ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, lease_until = EXCLUDED.lease_until
                WHERE s.holder = EXCLUDED.holder OR s.holder IS NULL OR s.lease_until IS NULL OR s.lease_until <= $4
                RETURNING s.name, s.value, s.holder, s.lease_until, s.updated_at
                """, [.text(name), .text(holder), .integer(until), .integer(now)], logger: logger)
            return try rows.first.map(Self.decodeLeasedState)
        }
    }

    public func saveLeasedState(_ name: String, value: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkLeaseArguments(name: name, holder: holder)
        let logger = self.logger
        let now = now.ledgerMilliseconds
        return try await withConnection { connection in
            try await !Self.rows(connection, """
                UPDATE ledger_leased_states SET value = $1, lease_until = $2, updated_at = $3 WHERE name = $4 AND holder = $5 RETURNING name
                """, [.text(value), .integer(now + Int64(lease.seconds * 1000)), .integer(now), .text(name), .text(holder)], logger: logger).isEmpty
        }
    }

    public func releaseLease(on name: String, holder: String) async throws(LedgerError) {
        let logger = self.logger
        try await withConnection { connection in
            try await Self.run(connection, "UPDATE ledger_leased_states SET lease_until = NULL WHERE name = $1 AND holder = $2", [.text(name), .text(holder)], logger: logger)
        }
    }

    public func leasedStates(prefix: String) async throws(LedgerError) -> [LeasedState] {
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.rows(connection, """
                SELECT name, value, holder, lease_until, updated_at FROM ledger_leased_states
                WHERE left(name, length($1)) = $1 ORDER BY name
                """, [.text(prefix)], logger: logger).map(Self.decodeLeasedState)
        }
    }

    public func removeLeasedState(_ name: String, holder: String) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkLeaseArguments(name: name, holder: holder)
        let logger = self.logger
        return try await withConnection { connection in
            try await !Self.rows(
                connection, "DELETE FROM ledger_leased_states WHERE name = $1 AND holder = $2 RETURNING name", [.text(name), .text(holder)], logger: logger
            ).isEmpty
        }
    }

    private static func decodeLeasedState(_ row: PostgresRandomAccessRow) throws -> LeasedState {
        LeasedState(
            name: try row.text(0), value: try row.optionalText(1), holder: try row.optionalText(2),
            leaseUntil: try row.optionalDate(3), updatedAt: try row.optionalDate(4)
        )
    }
}

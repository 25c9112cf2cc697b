public import Foundation
import Logging
import PostgresNIO
public import StoreGateLedger

/// What entitlement.changed last announced per account (schema 11).
extension PostgresLedger {
    public func entitlementSnapshots(for accounts: [AccountID]) async throws(LedgerError) -> [AccountID: EntitlementSnapshot] {
        guard !accounts.isEmpty else { return [:] }
        let logger = self.logger
        let rows = try await withConnection { connection in
            try await Self.rows(
                connection, "SELECT account_id, snapshot, next_check_at FROM ledger_entitlement_snapshots WHERE account_id = ANY($1::text[])",
                [.texts(accounts.map(\.rawValue))], logger: logger
            ).map { row in (try row.text(0), try row.text(1), try row.optionalDate(2)) }
        }
        var found: [AccountID: EntitlementSnapshot] = [:]
        for (account, text, next) in rows {
            found[AccountID(stored: account)] = try EntitlementSnapshot(storedText: text, nextCheckAt: next)
        }
        return found
    }

    public func accountsWithEntitlementsDue(at date: Date, limit: Int) async throws(LedgerError) -> [AccountID] {
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.rows(
                connection,
                "SELECT account_id FROM ledger_entitlement_snapshots WHERE next_check_at <= $1 ORDER BY next_check_at, account_id LIMIT $2",
                [.integer(date.ledgerMilliseconds), .integer(Int64(max(0, limit)))], logger: logger
            ).map { row in AccountID(stored: try row.text(0)) }
        }
    }

    public func commitEntitlementChanges(_ batch: EntitlementChangeBatch, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool {
        let logger = self.logger
        let at = now
        let now = now.ledgerMilliseconds
        return try await transaction { connection -> Bool in
            let accounts = Set(batch.events.map(\.account)).sorted { $0.rawValue < $1.rawValue }
            for account in accounts { try await Self.lockAccount(account, connection, logger: logger) }
            // Fenced: only the lease's holder moves the place, and the rest goes with it.
            let held = try await Self.rows(
                connection,
                "UPDATE ledger_leased_states SET value = $1, lease_until = $2, updated_at = $3 WHERE name = $4 AND holder = $5 RETURNING name",
                [.text(batch.placeValue), .integer(now + Int64(lease.seconds * 1000)), .integer(now), .text(batch.placeName), .text(holder)],
                logger: logger
            )
            guard !held.isEmpty else { return false }
            for (account, snapshot) in batch.snapshots.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                _ = try await Self.rows(
                    connection,
                    """
                    INSERT INTO ledger_entitlement_snapshots (account_id, snapshot, next_check_at) VALUES ($1, $2, $3)
                    ON CONFLICT (account_id) DO UPDATE SET snapshot = EXCLUDED.snapshot, next_check_at = EXCLUDED.next_check_at
                    """,
                    [.text(account.rawValue), .text(snapshot.storedText), .optional(snapshot.nextCheckAt?.ledgerMilliseconds)], logger: logger
                )
            }
            if !batch.events.isEmpty {
                try await Self.appendEvents(batch.events, at: at, connection, logger: logger)
            }
            return true
        }
    }
}

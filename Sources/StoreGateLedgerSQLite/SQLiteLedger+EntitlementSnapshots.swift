public import Foundation
public import StoreGateLedger

/// What entitlement.changed last announced per account (schema 11).
extension SQLiteLedger {
    public func entitlementSnapshots(for accounts: [AccountID]) async throws(LedgerError) -> [AccountID: EntitlementSnapshot] {
        guard !accounts.isEmpty else { return [:] }
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: true) { connection throws(LedgerError) in
                var found: [AccountID: EntitlementSnapshot] = [:]
                for account in accounts {
                    var stored: (String, Int64?)?
                    try connection.query(
                        "SELECT snapshot, next_check_at FROM ledger_entitlement_snapshots WHERE account_id = ?", [.text(account.rawValue)]
                    ) { row throws(LedgerError) in stored = (row.text(0), row.optionalInteger(1)) }
                    if let (text, next) = stored {
                        found[account] = try EntitlementSnapshot(storedText: text, nextCheckAt: next.map(Date.init(ledgerMilliseconds:)))
                    }
                }
                return found
            }
        }
    }

    public func accountsWithEntitlementsDue(at date: Date, limit: Int) async throws(LedgerError) -> [AccountID] {
        try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                var accounts: [AccountID] = []
                try connection.query(
                    "SELECT account_id FROM ledger_entitlement_snapshots WHERE next_check_at <= ? ORDER BY next_check_at, account_id LIMIT ?",
                    [.integer(date.ledgerMilliseconds), .integer(Int64(max(0, limit)))]
                ) { row throws(LedgerError) in accounts.append(AccountID(stored: row.text(0))) }
                return accounts
            }
        }
    }

    public func commitEntitlementChanges(_ batch: EntitlementChangeBatch, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool {
        let now = now.ledgerMilliseconds
        return try await write { connection throws(LedgerError) -> Bool in
            // Fenced: only the lease's holder moves the place, and the rest goes with it.
            guard try connection.run(
                "UPDATE ledger_leased_states SET value = ?, lease_until = ?, updated_at = ? WHERE name = ? AND holder = ?",
                [.text(batch.placeValue), .integer(now + Int64(lease.seconds * 1000)), .integer(now), .text(batch.placeName), .text(holder)]
            ) == 1 else { return false }
            for (account, snapshot) in batch.snapshots.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                try connection.run(
                    """
                    INSERT INTO ledger_entitlement_snapshots (account_id, snapshot, next_check_at) VALUES (?1, ?2, ?3)
                    ON CONFLICT (account_id) DO UPDATE SET snapshot = ?2, next_check_at = ?3
                    """,
                    [.text(account.rawValue), .text(snapshot.storedText), .optional(snapshot.nextCheckAt?.ledgerMilliseconds)]
                )
            }
            try Self.appendEvents(batch.events, connection)
            return true
        }
    }
}

public import Foundation
public import StoreGateLedger

/// Leased states in the SQLite file (schema 5). Writes are serialized by the file's write
/// lock, so taking a lease is a read and an upsert in one write transaction.
extension SQLiteLedger {
    public func acquireLease(on name: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> LeasedState? {
        try LedgerPlanner.checkLeaseArguments(name: name, holder: holder)
        let now = now.ledgerMilliseconds
        let until = now + Int64(lease.seconds * 1000)
        return try await write { connection throws(LedgerError) -> LeasedState? in
            let current = try Self.leasedState(connection, name)
            if let current, current.holder != holder, current.isLeased(at: Date(ledgerMilliseconds: now)) { return nil }
            try connection.run("""
                INSERT INTO ledger_leased_states (name, holder, lease_until) VALUES (?1, ?2, ?3)
                ON CONFLICT (name) DO UPDATE SET holder = ?2, lease_until = ?3
                """, [.text(name), .text(holder), .integer(until)])
            return LeasedState(name: name, value: current?.value, holder: holder, leaseUntil: Date(ledgerMilliseconds: until), updatedAt: current?.updatedAt)
        }
    }

    public func saveLeasedState(_ name: String, value: String, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkLeaseArguments(name: name, holder: holder)
        let now = now.ledgerMilliseconds
        return try await write { connection throws(LedgerError) -> Bool in
            try connection.run(
                "UPDATE ledger_leased_states SET value = ?, lease_until = ?, updated_at = ? WHERE name = ? AND holder = ?",
                [.text(value), .integer(now + Int64(lease.seconds * 1000)), .integer(now), .text(name), .text(holder)]
            ) == 1
        }
    }

    public func releaseLease(on name: String, holder: String) async throws(LedgerError) {
        _ = try await write { connection throws(LedgerError) -> Int in
            try connection.run("UPDATE ledger_leased_states SET lease_until = NULL WHERE name = ? AND holder = ?", [.text(name), .text(holder)])
        }
    }

    public func leasedStates(prefix: String) async throws(LedgerError) -> [LeasedState] {
        try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                var states: [LeasedState] = []
                try connection.query(
                    "SELECT name, value, holder, lease_until, updated_at FROM ledger_leased_states WHERE substr(name, 1, length(?1)) = ?1 ORDER BY name",
                    [.text(prefix)]
                ) { row throws(LedgerError) in
                    states.append(Self.decodeLeasedState(row))
                }
                return states
            }
        }
    }

    public func removeLeasedState(_ name: String, holder: String) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkLeaseArguments(name: name, holder: holder)
        return try await write { connection throws(LedgerError) -> Bool in
            try connection.run("DELETE FROM ledger_leased_states WHERE name = ? AND holder = ?", [.text(name), .text(holder)]) == 1
        }
    }

    private static func leasedState(_ connection: SQLiteConnection, _ name: String) throws(LedgerError) -> LeasedState? {
        var state: LeasedState?
        try connection.query("SELECT name, value, holder, lease_until, updated_at FROM ledger_leased_states WHERE name = ?", [.text(name)]) { row throws(LedgerError) in
            state = decodeLeasedState(row)
        }
        return state
    }

    private static func decodeLeasedState(_ row: SQLiteRow) -> LeasedState {
        LeasedState(
            name: row.text(0), value: row.optionalText(1), holder: row.optionalText(2),
            leaseUntil: row.optionalInteger(3).map(Date.init(ledgerMilliseconds:)), updatedAt: row.optionalInteger(4).map(Date.init(ledgerMilliseconds:))
        )
    }
}

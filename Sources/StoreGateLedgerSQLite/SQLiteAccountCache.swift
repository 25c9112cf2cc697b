import Foundation
import StoreGateLedger
import Synchronization

/// The stored facts of recently read accounts (their records and grants), kept while the file
/// has not changed, so that an app's entitlement check reads no table when nothing was written.
///
/// Validity is SQLite's own: before every lookup one dedicated read-only connection asks
/// `PRAGMA data_version`, which changes whenever *any other connection* commits — this
/// process's writer, another `storegate serve` on the same file, or any tool. A changed
/// version empties the cache before anything is answered from it, and an entry is only stored
/// under the version checked *before* its read began, so an answer never predates a commit
/// the caller could have seen. What it costs when the file changes all the time is one pragma
/// per read on top of the read.
///
/// Bounded: at most ``Bounds/accounts`` accounts and ``Bounds/records`` stored rows in total
/// (transactions, renewals, notifications, balances and grants, each counting one); an account
/// heavier than a sixteenth of the row budget is never cached. With the defaults (4,096
/// accounts, 50,000 rows, about 500 bytes each) the cache holds at most about 25 MB.
final class SQLiteAccountCache: Sendable {
    /// How much the cache may hold.
    struct Bounds: Sendable {
        /// Accounts held at most; 0 turns the cache off.
        var accounts: Int
        /// Stored rows held at most, over all accounts.
        var records: Int
    }

    /// What a lookup found: the file's version it was checked against, and the account's facts
    /// when they were cached under that version.
    struct Lookup {
        let version: Int64
        let facts: Facts?
    }

    /// One account's stored facts, read in one snapshot.
    struct Facts: Sendable {
        let records: AccountRecords
        let grants: [EntitlementGrant]

        var weight: Int {
            records.transactions.count + records.renewals.count + records.notifications.count + records.balances.count + grants.count + 1
        }
    }

    private struct State: ~Copyable {
        var watch: SQLiteConnection?
        var version: Int64 = -1
        var entries: [AccountID: Facts] = [:]
        var weight = 0

        /// Forgets every entry; they are valid under `version` from now on.
        mutating func empty(version: Int64) {
            entries.removeAll(keepingCapacity: true)
            weight = 0
            self.version = version
        }
    }

    let bounds: Bounds
    private let state: Mutex<State>
    private let open: @Sendable () throws(LedgerError) -> SQLiteConnection

    /// A cache whose watch connection `open` makes on first use.
    init(bounds: Bounds, open: @escaping @Sendable () throws(LedgerError) -> SQLiteConnection) {
        self.bounds = bounds
        self.open = open
        self.state = Mutex(State())
    }

    var isEnabled: Bool { bounds.accounts > 0 && bounds.records > 0 }

    /// Checks the file's version (emptying the cache when it changed) and returns `account`'s
    /// facts if they are cached under it. Blocking (one pragma): call it off the event loops.
    func lookUp(_ account: AccountID) throws(LedgerError) -> Lookup {
        try state.withLock { state throws(LedgerError) -> Lookup in
            let connection: SQLiteConnection
            if let watch = state.watch {
                connection = watch
            } else {
                connection = try open()
                state.watch = connection
            }
            var version: Int64 = -1
            do throws(LedgerError) {
                try connection.query("PRAGMA data_version") { row throws(LedgerError) in version = row.integer(0) }
            } catch {
                // A watch connection that failed is not trusted again; the next lookup opens another.
                connection.close()
                state.watch = nil
                state.empty(version: -1)
                throw error
            }
            if version != state.version { state.empty(version: version) }
            return Lookup(version: version, facts: state.entries[account])
        }
    }

    /// Keeps `facts`, read in a snapshot that began after the lookup that returned `version`,
    /// unless the file changed since (the entry would already be stale) or they are too heavy.
    func store(_ facts: Facts, for account: AccountID, readAfter version: Int64) {
        let weight = facts.weight
        guard isEnabled, weight <= max(1, bounds.records / 16) else { return }
        state.withLock { state in
            guard state.version == version, state.entries[account] == nil else { return }
            while !state.entries.isEmpty, state.entries.count >= bounds.accounts || state.weight + weight > bounds.records {
                let evicted = state.entries.remove(at: state.entries.startIndex)
                state.weight -= evicted.value.weight
            }
            state.entries[account] = facts
            state.weight += weight
        }
    }

    /// Accounts and rows held now (tests and metrics).
    var usage: (accounts: Int, records: Int) {
        state.withLock { state in (state.entries.count, state.weight) }
    }

    /// Closes the watch connection and forgets everything.
    func close() {
        state.withLock { state in
            state.watch?.close()
            state.watch = nil
            state.empty(version: -1)
        }
    }
}

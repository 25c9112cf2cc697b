import Foundation
import StoreGateLedger
import Synchronization

/// The stored facts of recently read accounts (their records and grants), kept while the file
/// has not changed, so that an app's entitlement check reads no table when nothing was written.
///
/// Validity is SQLite's own: before every lookup one dedicated read-only connection reads the
/// file's ``FileVersion``, which changes whenever *any* connection commits — this process's
/// writer, another `storegate serve` on the same file, or any tool. A changed version empties
/// the cache before anything is answered from it, and an entry is only stored under the
/// version checked *before* its read began, so an answer never predates a commit the caller
/// could have seen. What it costs when the file changes all the time is that check per read
/// on top of the read.
///
/// The check reads the WAL-index header from the shared memory (`-shm`) the watch connection
/// mapped, as SQLite's own readers do before each transaction: every commit rewrites that
/// header (its counter moves) before the commit returns, in any process, so a version read
/// after a commit returned differs from one read before it. It costs a few loads instead of
/// `PRAGMA data_version`'s read transaction (two `fcntl` locks), which measured 6 % of an
/// entitlement check's CPU through the service. When the header cannot be read at that
/// instant (a writer is rewriting it) the check asks the pragma instead; the two kinds of
/// version never compare equal, so switching between them empties the cache, never keeps it.
///
/// An entry also keeps the holdings last derived from its facts (``Derived``) with the span of
/// time over which they hold (``EntitlementCalculator/nextChange(after:records:)``): a check
/// at any instant of that span reuses them instead of deriving them again. They belong to the
/// entry, so whatever empties or replaces the entry forgets them too.
///
/// Bounded: at most ``Bounds/accounts`` accounts and ``Bounds/records`` stored rows in total
/// (transactions, renewals, notifications, balances and grants, each counting one; derived
/// holdings count as many rows again as their facts); an account heavier than a sixteenth of
/// the row budget is never cached. With the defaults (4,096 accounts, 50,000 rows, about 500
/// bytes each) the cache holds at most about 25 MB.
final class SQLiteAccountCache: Sendable {
    /// How much the cache may hold.
    struct Bounds: Sendable {
        /// Accounts held at most; 0 turns the cache off.
        var accounts: Int
        /// Stored rows held at most, over all accounts.
        var records: Int
    }

    /// What identifies the file's committed state at a check.
    enum FileVersion: Equatable, Sendable {
        /// Before the first check, and after the watch connection failed: equal to no check's.
        case unknown
        /// The WAL-index header: commit counter, last valid frame, the WAL's salts.
        case walIndex(change: UInt32, lastFrame: UInt32, salt1: UInt32, salt2: UInt32)
        /// `PRAGMA data_version` on the watch connection (when the header could not be read).
        case dataVersion(Int64)
    }

    /// What a lookup found: the file's version it was checked against, and the account's facts
    /// (with the holdings last derived from them) when they were cached under that version.
    struct Lookup {
        let version: FileVersion
        let facts: Facts?
        let derived: Derived?
    }

    /// Holdings derived from an entry's facts at `from`, which hold until `until` (excluded;
    /// `nil`: for ever).
    struct Derived: Sendable {
        let holdings: Entitlements
        let from: Date
        let until: Date?

        /// The holdings at `date` when it falls in the span, else `nil`.
        func holdings(at date: Date) -> Entitlements? {
            guard date >= from, until.map({ date < $0 }) ?? true else { return nil }
            var holdings = holdings
            holdings.date = date
            return holdings
        }
    }

    private struct Entry {
        let facts: Facts
        var derived: Derived?

        var weight: Int { derived == nil ? facts.weight : 2 * facts.weight }
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
        var version = FileVersion.unknown
        var entries: [AccountID: Entry] = [:]
        var weight = 0

        /// Forgets every entry; they are valid under `version` from now on.
        mutating func empty(version: FileVersion) {
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
    /// facts if they are cached under it. Blocking (at worst one pragma): call it off the event
    /// loops.
    func lookUp(_ account: AccountID) throws(LedgerError) -> Lookup {
        try state.withLock { state throws(LedgerError) -> Lookup in
            let version: FileVersion
            // The header is read only from a watch connection that has read the WAL once (the
            // pragma below maps the shared memory; before that there is nothing to read).
            if let watch = state.watch, let header = watch.walIndexVersion() {
                version = .walIndex(change: header.change, lastFrame: header.lastFrame, salt1: header.salt1, salt2: header.salt2)
            } else {
                let connection: SQLiteConnection
                if let watch = state.watch {
                    connection = watch
                } else {
                    connection = try open()
                    state.watch = connection
                }
                var dataVersion: Int64 = -1
                do throws(LedgerError) {
                    try connection.query("PRAGMA data_version") { row throws(LedgerError) in dataVersion = row.integer(0) }
                } catch {
                    // A watch connection that failed is not trusted again; the next lookup opens another.
                    connection.close()
                    state.watch = nil
                    state.empty(version: .unknown)
                    throw error
                }
                version = .dataVersion(dataVersion)
            }
            if version != state.version { state.empty(version: version) }
            let entry = state.entries[account]
            return Lookup(version: version, facts: entry?.facts, derived: entry?.derived)
        }
    }

    /// Keeps `facts`, read in a snapshot that began after the lookup that returned `version`,
    /// unless the file changed since (the entry would already be stale) or they are too heavy.
    func store(_ facts: Facts, for account: AccountID, readAfter version: FileVersion) {
        let weight = facts.weight
        guard isEnabled, version != .unknown, weight <= max(1, bounds.records / 16) else { return }
        state.withLock { state in
            guard state.version == version, state.entries[account] == nil else { return }
            while !state.entries.isEmpty, state.entries.count >= bounds.accounts || state.weight + weight > bounds.records {
                let evicted = state.entries.remove(at: state.entries.startIndex)
                state.weight -= evicted.value.weight
            }
            state.entries[account] = Entry(facts: facts)
            state.weight += weight
        }
    }

    /// Keeps holdings derived from the facts a lookup under `version` returned, unless the file
    /// changed since (the entry is then gone or replaced) or the row budget has no room left.
    func remember(_ derived: Derived, for account: AccountID, checkedAt version: FileVersion) {
        state.withLock { state in
            guard version != .unknown, state.version == version, let entry = state.entries[account] else { return }
            var updated = entry
            updated.derived = derived
            let added = updated.weight - entry.weight
            guard state.weight + added <= bounds.records else { return }
            state.entries[account] = updated
            state.weight += added
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
            state.empty(version: .unknown)
        }
    }
}

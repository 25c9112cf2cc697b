public import Foundation
import Logging
import NIOPosix
public import StoreGateCore
public import StoreGateLedger
import Synchronization

/// The embedded ``Ledger``: one SQLite file in WAL mode, on the SQLite amalgamation the
/// `CSQLite` target compiles.
///
/// ## Threads
/// Reads run synchronously on the calling task's thread — Swift's cooperative pool, never a
/// NIO event loop: when a call arrives on an event loop thread (or NIO has taken over the
/// global executor), the work moves to `NIOThreadPool.singleton` instead. Each read holds a
/// connection for tens of microseconds; a thread hop per query would cost more than the
/// query. Reads use a small pool of reader connections, which WAL lets run beside the writer.
/// Writes run on the writer's own thread (``SQLiteWriter``), off the cooperative pool, on one
/// connection (SQLite has one writer at a time anyway), grouped into `BEGIN IMMEDIATE`
/// transactions. Statements are prepared once per connection and reused.
///
/// A background thread checkpoints the WAL into the database file after writes
/// (``SQLiteCheckpointer``), so commits never pay for a checkpoint's fsyncs, and the writer
/// indexes events for the console's timeline in batches between jobs (``SQLiteTimelineIndex``),
/// so a purchase's commit does not pay for that index either.
///
/// ## Durability
/// A call returns only after its transaction committed. With ``Options/Synchronous/normal``
/// (the default) a commit survives the process being killed; with
/// ``Options/Synchronous/full`` it also survives power loss, at the cost of an fsync per
/// commit.
///
/// ## Processes
/// Several processes may open the same file: `BEGIN IMMEDIATE` and the busy timeout serialize
/// their writes, so consumption stays exact across processes. Migrations are versioned and
/// applied at open, idempotently.
public final class SQLiteLedger: Ledger {
    /// How the file is opened.
    public struct Options: Sendable {
        /// SQLite's `synchronous` setting.
        public enum Synchronous: String, Sendable {
            /// Durable across process crashes; the last commits may be lost on power loss.
            case normal = "NORMAL"
            /// Durable across power loss: an fsync per commit.
            case full = "FULL"
        }

        /// SQLite's `synchronous` setting for every connection.
        public var synchronous: Synchronous
        /// How long a write waits for another process's write to finish.
        public var busyTimeout: Duration
        /// Reader connections kept open between calls.
        public var maximumIdleReaders: Int
        /// Accounts whose stored facts are kept between reads while the file is unchanged
        /// (``SQLiteAccountCache``); 0 turns the cache off.
        public var cachedAccounts: Int
        /// Stored rows (transactions, renewals, notifications, balances, grants) the account
        /// cache holds at most, over all accounts.
        public var cachedRows: Int
        /// SQLite's page cache per connection, in bytes (`PRAGMA cache_size`): the writer's and
        /// each reader's. Pages are allocated as they are read, up to this bound; a connection
        /// holds it until it is closed (idle readers and the writer live as long as the ledger).
        public var pageCacheBytes: Int
        /// How much of the file each reader maps into memory (`PRAGMA mmap_size`), in bytes;
        /// 0 reads pages with `pread` into the page cache. Mapped pages a reader touched count
        /// in the process's RSS (as file-backed pages the kernel may drop), so the bound is
        /// the file's size up to this.
        public var mappedBytes: Int
        /// Events the writer indexes for the console's timeline per transaction
        /// (``SQLiteTimelineIndex``); tests make it small to read across the mark.
        var timelineIndexBatch = SQLiteTimelineIndex.defaultBatch
        /// The WAL frames at which the writer restarts the log (``SQLiteCheckpointer``): tests
        /// choose fewer.
        var logRestartFrames = SQLiteCheckpointer.restartFrames
        /// The last schema version to apply, all when `nil`: tests build older files with it.
        var migratingThrough: Int?
        /// When records and notifications are planned before they reach the writer thread
        /// (``SQLiteLedger/planAhead(families:transactions:_:)``): while it is busy;
        /// tests choose always or never.
        package var planningAhead = PlanningAhead.whenBusy

        package enum PlanningAhead: Sendable {
            case whenBusy, always, never
        }

        /// Default options: `synchronous = NORMAL`, a 5 s busy timeout, one idle reader per core,
        /// an account cache of 4,096 accounts and 50,000 rows, a 2 MiB page cache per connection
        /// (SQLite's own default) and no memory-mapped I/O.
        public init(
            synchronous: Synchronous = .normal,
            busyTimeout: Duration = .seconds(5),
            maximumIdleReaders: Int = ProcessInfo.processInfo.activeProcessorCount,
            cachedAccounts: Int = 4096,
            cachedRows: Int = 50_000,
            pageCacheBytes: Int = defaultPageCacheBytes,
            mappedBytes: Int = 0
        ) {
            self.synchronous = synchronous
            self.busyTimeout = busyTimeout
            self.maximumIdleReaders = maximumIdleReaders
            self.cachedAccounts = max(0, cachedAccounts)
            self.cachedRows = max(0, cachedRows)
            self.pageCacheBytes = max(Self.minimumPageCacheBytes, pageCacheBytes)
            self.mappedBytes = max(0, mappedBytes)
        }

        /// The page cache a connection is given by default: 2 MiB, SQLite's own default. A
        /// 16 MiB cache measured no faster at 10^5 transactions, nor 10 or 21 MiB at 10^7 with
        /// the file in the operating system's cache, nor 21 MiB for the service under reads and
        /// writes at 10^7 (docs/scale.md), and each took more memory: a reader's cache is emptied
        /// whenever another connection commits, so only read-only stretches keep it.
        public static let defaultPageCacheBytes = 2 << 20
        /// The smallest page cache a connection is given (256 KiB).
        public static let minimumPageCacheBytes = 256 << 10
    }

    public let backend = "sqlite"
    public let configuration: LedgerConfiguration
    /// The database file.
    public let path: String
    /// How the file was opened.
    public let options: Options
    let planner: LedgerPlanner
    let metrics: LedgerMetrics
    private let writer: SQLiteWriter
    private let readers: Mutex<ReaderPool>
    private let checkpointer: SQLiteCheckpointer
    let accountCache: SQLiteAccountCache
    /// How often the writer took a plan made ahead (``planAhead(families:transactions:_:)``).
    let plansAhead = PlanAheadCounts()
    /// Whether to plan a record or notification ahead now (``Options/planningAhead``).
    var planningAheadNow: Bool {
        switch options.planningAhead {
        case .whenBusy: writer.isBusy
        case .always: true
        case .never: false
        }
    }

    private struct ReaderPool: ~Copyable {
        var idle: [SQLiteConnection] = []
        var isClosed = false
    }

    /// Opens (creating if needed) the ledger file at `path` and applies missing migrations.
    ///
    /// Blocking: call it at start-up, not on an event loop.
    ///
    /// - Throws: ``LedgerError/Code/storage`` when the file cannot be opened,
    ///   ``LedgerError/Code/migration`` or ``LedgerError/Code/schemaTooNew``.
    public init(path: String, configuration: LedgerConfiguration = LedgerConfiguration(), options: Options = Options()) throws(LedgerError) {
        self.path = path
        self.configuration = configuration
        self.options = options
        self.planner = LedgerPlanner(configuration: configuration)
        self.metrics = LedgerMetrics(backend: "sqlite")
        let connection = try SQLiteConnection(path: path, create: true, busyTimeoutMilliseconds: Self.milliseconds(options.busyTimeout))
        var mode = ""
        try connection.query("PRAGMA journal_mode = WAL") { row throws(LedgerError) in mode = row.text(0) }
        guard mode.lowercased() == "wal" else {
            throw LedgerError(.storage, reason: "SQLite refused WAL mode (journal_mode is \(mode))")
        }
        try connection.execute("PRAGMA synchronous = \(options.synchronous.rawValue)")
        // A job of a group commit runs in a savepoint, and every page it changes is first copied
        // to the statement journal; past 64 KiB SQLite spills that journal to a temporary file
        // (a file created, written and deleted per job). Kept in memory, it never touches disk.
        try connection.execute("PRAGMA temp_store = MEMORY")
        // Checkpoints run on the checkpointer's thread, and the writer restarts the log between
        // batches (``SQLiteCheckpointer``): no automatic checkpoint in the commit path.
        try connection.execute("PRAGMA wal_autocheckpoint = 0")
        try connection.execute("PRAGMA journal_size_limit = 67108864")
        try connection.execute("PRAGMA cache_size = -\(options.pageCacheBytes / 1024)")
        try SQLiteSchema.migrate(connection, now: configuration.now().ledgerMilliseconds, through: options.migratingThrough)
        try Self.rebuildRollupsIfNeeded(connection)
        do throws(LedgerError) {
            try SQLiteTimelineIndex.catchUp(connection, batch: options.timelineIndexBatch)
        } catch {
            // Reads stay exact (they scan the longer tail); the writer indexes it later. A file
            // that cannot take this write (a full disk) still opens, as it did before.
            configuration.logger.debug("the timeline index could not catch up at open", metadata: ["error": "\(error.code)"])
        }
        let busyTimeout = Self.milliseconds(options.busyTimeout)
        let restartFrames = max(1, options.logRestartFrames)
        connection.nextLogRestart = restartFrames
        let checkpointer = SQLiteCheckpointer(path: path, busyTimeoutMilliseconds: busyTimeout)
        self.checkpointer = checkpointer
        let batch = options.timelineIndexBatch
        self.writer = SQLiteWriter(
            connection: connection, onCommit: { checkpointer.committed() },
            beforeCommit: { connection throws(LedgerError) in try Self.flushStagedRollupChanges(connection) }
        ) { connection in
            if SQLiteTimelineIndex.isDue(connection, batch: batch) { SQLiteTimelineIndex.indexBatch(connection, batch: batch) }
            SQLiteCheckpointer.restartLogIfLong(connection, every: restartFrames, busyTimeoutMilliseconds: busyTimeout)
        }
        self.readers = Mutex(ReaderPool())
        self.accountCache = SQLiteAccountCache(bounds: .init(accounts: options.cachedAccounts, records: options.cachedRows)) { () throws(LedgerError) in
            // The watch connection only reads the WAL-index header (or asks `PRAGMA data_version`):
            // no page cache, no mapping of the database.
            try Self.openReader(path: path, busyTimeoutMilliseconds: busyTimeout, pageCacheBytes: 0, mappedBytes: 0)
        }
        checkpointer.start()
        configuration.logger.debug("opened the SQLite ledger", metadata: ["synchronous": "\(options.synchronous.rawValue)"])
    }

    deinit {
        writer.close()
        checkpointer.stop()
        accountCache.close()
        readers.withLock { pool in
            for connection in pool.idle { connection.close() }
        }
    }

    // MARK: Ledger

    @discardableResult
    public func record(_ proof: VerifiedProof, for account: AccountID) async throws(LedgerError) -> RecordOutcome {
        try await metrics.measureRecord { () throws(LedgerError) in
            let now = configuration.now()
            let prepared = try planner.prepare(proof, for: account, receivedAt: now)
            let planner = self.planner
            let ahead = await planAhead(families: prepared.familyKeys, transactions: prepared.transactionKeys) {
                state throws(LedgerError) in try planner.plan(prepared, state: state)
            }
            let counts = plansAhead
            let result = try await write { connection throws(LedgerError) -> Result<RecordOutcome, LedgerError> in
                try Self.record(prepared, planner: planner, ahead: ahead, counts: counts, at: now, connection)
            }
            return try result.get()
        }
    }

    /// Loads, plans and applies a prepared proof inside the open write transaction:
    /// ``record(_:for:)``'s write and the bulk path's. A refusal commits its event, and nothing
    /// else (`.failure`); an error thrown must roll the transaction back.
    /// `ahead`: a plan made before the write (``planAhead(families:transactions:_:)``),
    /// taken only when the rows it was made from are the ones loaded here.
    static func record(
        _ prepared: PreparedProof, planner: LedgerPlanner, ahead: PlannedWrite<RecordOutcome>? = nil, counts: PlanAheadCounts? = nil,
        at now: Date, _ connection: SQLiteConnection
    ) throws(LedgerError) -> Result<RecordOutcome, LedgerError> {
        let state = try loadState(connection, families: prepared.familyKeys, transactions: prepared.transactionKeys)
        do throws(LedgerError) {
            let (plan, outcome) = try Self.plan(ahead, state: state, counts: counts) { state throws(LedgerError) in
                try planner.plan(prepared, state: state)
            }
            try apply(plan, at: now, connection)
            return .success(outcome)
        } catch {
            guard let refusal = EventPlanner.refusal(error, prepared: prepared) else { throw error }
            try appendEvents([refusal], connection)
            return .failure(error)
        }
    }

    @discardableResult
    public func apply(_ notification: VerifiedNotification) async throws(LedgerError) -> NotificationOutcome {
        try await metrics.measureNotification { () throws(LedgerError) in
            let now = configuration.now()
            let prepared = try planner.prepare(notification, receivedAt: now)
            let planner = self.planner
            let ahead = await planAhead(families: prepared.familyKeys, transactions: prepared.transactionKeys) {
                state throws(LedgerError) in try planner.plan(prepared, state: state)
            }
            let counts = plansAhead
            return try await write { connection throws(LedgerError) -> NotificationOutcome in
                try Self.apply(prepared, planner: planner, ahead: ahead, counts: counts, at: now, connection)
            }
        }
    }

    /// Takes a prepared notification once, inside the open write transaction: ``apply(_:)``'s
    /// write and the bulk path's. An error thrown must roll the transaction back.
    static func apply(
        _ prepared: PreparedNotification, planner: LedgerPlanner, ahead: PlannedWrite<NotificationOutcome>? = nil,
        counts: PlanAheadCounts? = nil, at now: Date, _ connection: SQLiteConnection
    ) throws(LedgerError) -> NotificationOutcome {
        let uuid = prepared.notification.summary.notificationUUID
        var exists = false
        try connection.query("SELECT 1 FROM ledger_notifications WHERE notification_uuid = ?", [.text(uuid)]) { _ throws(LedgerError) in
            exists = true
        }
        let state = try loadState(connection, families: prepared.familyKeys, transactions: prepared.transactionKeys)
        if exists {
            let owner = prepared.transaction.flatMap { state.families[$0.familyKey]?.account }
            return NotificationOutcome(notificationUUID: uuid, isDuplicate: true, account: owner, transactionId: prepared.transaction?.value.transactionId)
        }
        let (plan, outcome) = try Self.plan(ahead, state: state, counts: counts) { state throws(LedgerError) in
            try planner.plan(prepared, state: state)
        }
        try apply(plan, at: now, connection)
        return outcome
    }

    public func entitlements(for account: AccountID, at date: Date) async throws(LedgerError) -> Entitlements {
        try await metrics.measureQuery { () throws(LedgerError) in
            try await perform { () throws(LedgerError) in try self.holdings(account, at: date).holdings }
        }
    }

    public func balance(of productId: String, for account: AccountID) async throws(LedgerError) -> ConsumableBalance {
        try LedgerPlanner.checkProductId(productId)
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                try Self.balance(connection, BalanceKey(account: account, productId: productId))
            }
        }
    }

    @discardableResult
    public func consume(
        _ productId: String, quantity: Int, idempotencyKey: String, for account: AccountID, at date: Date
    ) async throws(LedgerError) -> ConsumptionReceipt {
        try await metrics.measureConsumption { () throws(LedgerError) in
            try LedgerPlanner.checkConsumption(productId: productId, quantity: quantity, idempotencyKey: idempotencyKey)
            let recordedAt = configuration.now()
            return try await write { connection throws(LedgerError) in
                try Self.consume(connection, productId: productId, quantity: quantity, key: idempotencyKey, account: account, at: date, recordedAt: recordedAt)
            }
        }
    }

    public func events(after sequence: Int64, limit: Int) async throws(LedgerError) -> [LedgerEvent] {
        try LedgerPlanner.checkEventPage(after: sequence, limit: limit)
        return try await perform { () throws(LedgerError) in
            // One snapshot: a cursor checked against retention, then read from, in the same state.
            try self.read(snapshot: true) { connection throws(LedgerError) in
                try LedgerPlanner.checkCursor(sequence, prunedThrough: Self.prunedThrough(connection))
                return try Self.loadEvents(connection, after: sequence, limit: limit)
            }
        }
    }

    /// Drops the triggers that keep the console overview's per-day counts: only
    /// `storegate-dev bench write-costs` does, on a ledger of its own, to measure what they
    /// cost a write. The counts are wrong from then on.
    package func dropActivityTriggersForBenchmark() async throws(LedgerError) {
        try await write { connection throws(LedgerError) in
            for trigger in SQLiteActivityDays.triggers { try connection.run("DROP TRIGGER \(trigger)") }
        }
    }

    public func lastEventSequence() async throws(LedgerError) -> Int64 {
        try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                var last: Int64 = 0
                try connection.query("SELECT COALESCE(MAX(sequence), 0) FROM ledger_events") { row throws(LedgerError) in last = row.integer(0) }
                return last
            }
        }
    }

    public func timeline(for account: AccountID, before sequence: Int64?, limit: Int) async throws(LedgerError) -> [LedgerEvent] {
        try BrowsingQuery.checkTimeline(before: sequence, limit: limit)
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: true) { connection throws(LedgerError) in
                try SQLiteTimelineIndex.timeline(connection, account: account, before: sequence, limit: limit)
            }
        }
    }

    public func search(_ term: String, limit: Int) async throws(LedgerError) -> [RecordedTransaction] {
        let term = try BrowsingQuery.checkSearch(term, limit: limit)
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                try Self.search(connection, term: term, limit: limit)
            }
        }
    }

    public func activity(days: Int, endingAt date: Date) async throws(LedgerError) -> [DailyActivity] {
        let window = try BrowsingQuery.window(days: days, endingAt: date)
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: true) { connection throws(LedgerError) in
                var tally = window
                try SQLiteActivityDays.tally(connection, into: &tally)
                return tally.result()
            }
        }
    }

    @discardableResult
    public func emitElapsedTransitions(until date: Date, limit: Int) async throws(LedgerError) -> Int {
        try SubscriptionClock.checkLimit(limit)
        let date = date.ledgerNormalized
        return try await write { connection throws(LedgerError) in
            let grants = try Self.emitEndedGrants(connection, at: date, limit: limit)
            let due = try Self.dueFamilies(connection, at: date, limit: limit)
            guard !due.isEmpty else { return grants }
            let state = try Self.loadState(connection, families: due, transactions: [])
            let (events, next) = SubscriptionClock.transitions(of: due, in: state, until: date)
            try Self.appendEvents(events, connection)
            try Self.setNextTransitions(next, connection)
            return due.count + grants
        }
    }

    public func transaction(_ transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> RecordedTransaction? {
        try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                try Self.loadTransactions(connection, [TransactionKey(environment: environment, transactionId: transactionId)]).first?.value
            }
        }
    }

    public func storedProof(_ digest: ProofDigest) async throws(LedgerError) -> [UInt8]? {
        let sealed = try await perform { () throws(LedgerError) -> SealedProof? in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                var sealed: SealedProof?
                try connection.query("SELECT key_id, sealed FROM ledger_proofs WHERE digest = ? AND sealed IS NOT NULL", [.blob(digest.bytes)]) { row throws(LedgerError) in
                    sealed = SealedProof(keyID: row.text(0), combined: row.blob(1))
                }
                return sealed
            }
        }
        guard let sealed else { return nil }
        guard let encryption = configuration.encryption else {
            throw LedgerError(.unknownEncryptionKey, reason: "a stored proof was sealed with key '\(sealed.keyID)', and no key is configured")
        }
        return try encryption.open(sealed, digest: digest)
    }

    public func checkIntegrity() async throws(LedgerError) -> LedgerIntegrityReport {
        try await perform { () throws(LedgerError) in
            try self.read(snapshot: true) { connection throws(LedgerError) in
                var problems: [String] = []
                try connection.query("PRAGMA integrity_check") { row throws(LedgerError) in
                    let line = row.text(0)
                    if line != "ok" { problems.append("integrity_check: \(line)") }
                }
                problems += try Self.invariants(connection).problems
                return LedgerIntegrityReport(backend: "sqlite", problems: problems)
            }
        }
    }

    /// Reads, then writes the file header's `user_version` (a counter StoreGate uses for
    /// nothing else), so a file that can no longer be written — a full disk, a read-only file,
    /// a file size limit — fails readiness before a purchase meets it.
    public func checkHealth() async throws(LedgerError) {
        _ = try await transaction("storegate-health-probe", in: .production)
        try await write { connection throws(LedgerError) in
            var version: Int64 = 0
            try connection.query("PRAGMA user_version") { row throws(LedgerError) in version = row.integer(0) }
            try connection.execute("PRAGMA user_version = \((version + 1) % Int64(Int32.max))")
        }
    }

    public func close() async {
        writer.close()
        checkpointer.stop()
        accountCache.close()
        readers.withLock { pool in
            pool.isClosed = true
            for connection in pool.idle { connection.close() }
            pool.idle.removeAll()
        }
    }

    // MARK: Connections and threads

    /// Runs blocking SQLite work: inline on the caller's thread, or on `NIOThreadPool.singleton`
    /// when that thread is a NIO event loop (SQLite must never block one).
    func perform<T: Sendable>(_ body: @escaping @Sendable () throws(LedgerError) -> T) async throws(LedgerError) -> T {
        guard MultiThreadedEventLoopGroup.currentEventLoop != nil else {
            return try body()
        }
        do {
            return try await NIOThreadPool.singleton.runIfActive { try body() }
        } catch let error as LedgerError {
            throw error
        } catch {
            throw LedgerError(.storage, reason: "the SQLite thread pool is not running", isRetryable: true)
        }
    }

    /// The writes waiting for the writer thread or running on it.
    var outstandingWrites: Int { writer.outstandingJobs }

    /// Runs `body` in a write transaction on the writer thread (``SQLiteWriter``), off the
    /// cooperative pool, and returns once it committed; `alone`: in a transaction of its own
    /// (``SQLiteWriter/write(alone:_:)``).
    func write<T: Sendable>(alone: Bool = false, _ body: @escaping @Sendable (SQLiteConnection) throws(LedgerError) -> T) async throws(LedgerError) -> T {
        try await writer.write(alone: alone, body)
    }

    /// Runs `body` on a reader connection, in a read transaction when `snapshot` (several
    /// statements that must see one state).
    func read<T>(snapshot: Bool, _ body: (SQLiteConnection) throws(LedgerError) -> T) throws(LedgerError) -> T {
        let connection = try takeReader()
        defer { giveBack(connection) }
        if snapshot {
            return try connection.transaction(immediate: false) { () throws(LedgerError) in try body(connection) }
        }
        return try body(connection)
    }

    private func takeReader() throws(LedgerError) -> SQLiteConnection {
        let (idle, isClosed) = readers.withLock { pool -> (SQLiteConnection?, Bool) in
            (pool.idle.popLast(), pool.isClosed)
        }
        if isClosed { throw LedgerError(.closed, reason: "the ledger is closed") }
        if let idle { return idle }
        return try Self.openReader(
            path: path, busyTimeoutMilliseconds: Self.milliseconds(options.busyTimeout), pageCacheBytes: options.pageCacheBytes,
            mappedBytes: options.mappedBytes
        )
    }

    /// A read-only connection to the file: the readers' and the account cache's watch.
    private static func openReader(
        path: String, busyTimeoutMilliseconds: Int32, pageCacheBytes: Int, mappedBytes: Int
    ) throws(LedgerError) -> SQLiteConnection {
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
        try connection.execute("PRAGMA query_only = 1")
        if pageCacheBytes > 0 { try connection.execute("PRAGMA cache_size = -\(pageCacheBytes / 1024)") }
        try connection.execute("PRAGMA mmap_size = \(mappedBytes)")
        return connection
    }

    /// The account's holdings at `date` and its grants: derived from its cached facts (read and
    /// kept on a miss), or reused from the entry when they were derived for a span that holds
    /// `date`.
    func holdings(_ account: AccountID, at date: Date) throws(LedgerError) -> EntitlementFacts {
        let lookup = accountCache.isEnabled ? try accountCache.lookUp(account) : nil
        if let facts = lookup?.facts, let holdings = lookup?.derived?.holdings(at: date) {
            return EntitlementFacts(holdings: holdings, grants: facts.grants)
        }
        let facts: SQLiteAccountCache.Facts
        if let cached = lookup?.facts {
            facts = cached
        } else {
            facts = try readAccountFacts(account)
            if let lookup { accountCache.store(facts, for: account, readAfter: lookup.version) }
        }
        let holdings = EntitlementCalculator.entitlements(for: account, records: facts.records, at: date)
        if let lookup {
            let until = EntitlementCalculator.nextChange(after: date, records: facts.records)
            accountCache.remember(.init(holdings: holdings, from: date, until: until), for: account, checkedAt: lookup.version)
        }
        return EntitlementFacts(holdings: holdings, grants: facts.grants)
    }

    private func readAccountFacts(_ account: AccountID) throws(LedgerError) -> SQLiteAccountCache.Facts {
        try read(snapshot: true) { connection throws(LedgerError) in
            SQLiteAccountCache.Facts(records: try Self.loadAccount(connection, account), grants: try Self.loadGrants(connection, account))
        }
    }

    private func giveBack(_ connection: SQLiteConnection) {
        let kept = readers.withLock { pool -> Bool in
            guard !pool.isClosed, pool.idle.count < options.maximumIdleReaders else { return false }
            pool.idle.append(connection)
            return true
        }
        if !kept { connection.close() }
    }

    private static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        return Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
    }
}

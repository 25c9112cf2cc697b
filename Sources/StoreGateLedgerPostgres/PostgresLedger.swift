public import Foundation
public import Logging
public import PostgresNIO
public import StoreGateCore
public import StoreGateLedger
import Synchronization

/// The ``Ledger`` for several service instances sharing one PostgreSQL database, on
/// PostgresNIO's `PostgresClient` connection pool.
///
/// Every invariant is enforced by the database, not by process memory. Recording is two
/// round trips: a load function reads the rows the change touches (``LoadWithEventsSQL``), the
/// shared planner decides, and the apply function (``ApplyWithEventsSQL``; PL/pgSQL functions
/// created by the migrations, ``PostgresFunctions``) writes the plan and its events in one
/// implicit transaction after checking, under row locks, that what the plan read has not
/// changed (transaction revisions, unowned families); primary keys refuse a second insert of
/// the same transaction, family or notification. A failed check or a lost insert race
/// (`serialization_failure`, `unique_violation`) makes the client read again, plan again
/// and retry, so concurrent writers on several instances serialize correctly. A consumption
/// is one statement: a conditional `UPDATE … WHERE purchased - consumed >= quantity` plus
/// the idempotency key as a primary key. Queries read an account in one statement (one
/// snapshot). Serialization failures, deadlocks and lost connections are retried a few times
/// before surfacing as retryable ``LedgerError``s.
///
/// Two ways to open one:
/// - ``init(client:configuration:operationTimeout:)`` with ``client(url:maximumConnections:logger:)``,
///   then ``migrate()`` — the caller runs the `PostgresClient` (a swift-service-lifecycle
///   `Service`) in its `ServiceGroup`, as `storegate serve` does.
/// - ``connect(url:configuration:maximumConnections:operationTimeout:)`` — for one-shot tools
///   and tests: the ledger runs its own client in a child task until ``close()``.
public final class PostgresLedger: Ledger {
    public let backend = "postgres"
    public let configuration: LedgerConfiguration
    /// The connection pool the ledger uses.
    public let client: PostgresClient
    let planner: LedgerPlanner
    let metrics: LedgerMetrics
    let logger: Logger
    /// The longest one ledger call waits for the database (retries included) before it fails
    /// with a retryable storage error; `nil` waits as long as PostgresNIO does (a server that is
    /// down then holds requests until it returns).
    public let operationTimeout: Duration?
    private let state = Mutex(LifecycleState())

    private struct LifecycleState {
        var isClosed = false
        var runTask: Task<Void, Never>?
    }

    /// Wraps a client the caller runs. Call ``migrate()`` before the first use.
    ///
    /// - Parameters:
    ///   - client: A `PostgresClient` whose `run()` the caller runs for the ledger's lifetime.
    ///   - configuration: Catalog, account tokens, encryption, logger.
    ///   - operationTimeout: The longest one call waits for the database.
    public init(client: PostgresClient, configuration: LedgerConfiguration = LedgerConfiguration(), operationTimeout: Duration? = nil) {
        self.client = client
        self.configuration = configuration
        self.planner = LedgerPlanner(configuration: configuration)
        self.metrics = LedgerMetrics(backend: "postgres")
        self.logger = configuration.logger
        self.operationTimeout = operationTimeout
    }

    /// Connects to `url` with a client the ledger runs itself, and applies migrations.
    ///
    /// - Parameters:
    ///   - url: `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]`.
    ///   - configuration: Catalog, account tokens, encryption, logger.
    ///   - maximumConnections: The pool's size.
    ///   - operationTimeout: The longest one call waits for the database (migrations excepted).
    /// - Throws: ``LedgerError/Code/invalidConfiguration`` for a malformed URL; a storage or
    ///   migration error when the database cannot be reached or migrated.
    public static func connect(
        url: String, configuration: LedgerConfiguration = LedgerConfiguration(), maximumConnections: Int = 20,
        operationTimeout: Duration? = nil
    ) async throws(LedgerError) -> PostgresLedger {
        try await connect(
            url: url, configuration: configuration, maximumConnections: maximumConnections, operationTimeout: operationTimeout,
            migratingThrough: nil
        )
    }

    /// ``connect(url:configuration:maximumConnections:operationTimeout:)`` applying the
    /// migrations up to `version` only (tests build the databases older StoreGates left).
    static func connect(
        url: String, configuration: LedgerConfiguration, maximumConnections: Int, operationTimeout: Duration?, migratingThrough version: Int?
    ) async throws(LedgerError) -> PostgresLedger {
        let client = try Self.client(url: url, maximumConnections: maximumConnections, logger: configuration.logger)
        let ledger = PostgresLedger(client: client, configuration: configuration, operationTimeout: operationTimeout)
        let task = Task { await client.run() }
        ledger.state.withLock { $0.runTask = task }
        do {
            try await ledger.migrate(through: version)
        } catch {
            await ledger.close()
            throw error
        }
        return ledger
    }

    /// A connection pool for `url`, for ``init(client:configuration:operationTimeout:)``: run it
    /// (it is a swift-service-lifecycle `Service`) for as long as the ledger is used.
    ///
    /// - Parameters:
    ///   - url: `postgres://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]`.
    ///   - maximumConnections: The pool's size.
    ///   - logger: The pool's background logger.
    /// - Throws: ``LedgerError/Code/invalidConfiguration`` for a malformed URL.
    public static func client(url: String, maximumConnections: Int, logger: Logger) throws(LedgerError) -> PostgresClient {
        var clientConfiguration = try PostgresURL.clientConfiguration(url)
        clientConfiguration.options.maximumConnections = max(1, maximumConnections)
        return PostgresClient(configuration: clientConfiguration, backgroundLogger: logger)
    }

    /// Returns once the database answers a query (`SELECT 1` on a pooled connection, retried
    /// as every call is, with no deadline of its own: the caller bounds it): whether it can be
    /// reached, apart from how long ``migrate()`` then takes.
    public func ping() async throws(LedgerError) {
        let logger = self.logger
        try await withConnection(bounded: false) { connection in
            _ = try await connection.query("SELECT 1", logger: logger)
        }
    }

    /// Applies the missing schema migrations, idempotently and safely when several instances
    /// start at once (a transaction-scoped advisory lock serializes them).
    ///
    /// - Throws: ``LedgerError/Code/migration``, ``LedgerError/Code/schemaTooNew``, or a
    ///   storage error.
    public func migrate() async throws(LedgerError) {
        try await migrate(through: nil)
    }

    /// ``migrate()`` up to `version` (all when `nil`); the rollups are computed once their
    /// tables exist (schema 14).
    func migrate(through version: Int?) async throws(LedgerError) {
        let logger = self.logger
        let now = configuration.now()
        try await transaction(bounded: false) { connection in
            try await PostgresSchema.migrate(connection, logger: logger, now: now.ledgerMilliseconds, through: version)
        }
        if version.map({ $0 >= 14 }) ?? true { try await rebuildRollupsIfNeeded() }
        logger.debug("migrated the PostgreSQL ledger")
    }

    // MARK: Ledger

    @discardableResult
    public func record(_ proof: VerifiedProof, for account: AccountID) async throws(LedgerError) -> RecordOutcome {
        try await metrics.measureRecord { () throws(LedgerError) in
            let now = configuration.now()
            let prepared = try planner.prepare(proof, for: account, receivedAt: now)
            let planner = self.planner
            let logger = self.logger
            return try await withConnection { connection in
                try await Self.record(prepared, planner: planner, at: now, connection, logger: logger)
            }.get()
        }
    }

    /// Loads, plans and applies a prepared proof (two round trips): ``record(_:for:)``'s and
    /// the bulk path's. A refusal stores its event, and nothing else (`.failure`). A
    /// ``LedgerError`` thrown comes from the planner, before anything was written; any other
    /// error is the database's.
    static func record(
        _ prepared: PreparedProof, planner: LedgerPlanner, at now: Date, _ connection: PostgresConnection, logger: Logger
    ) async throws -> Result<RecordOutcome, LedgerError> {
        let loaded = try await load(
            connection, families: prepared.familyKeys, transactions: prepared.transactionKeys, notification: nil, logger: logger
        )
        do {
            let (plan, outcome) = try planner.plan(prepared, state: loaded.state)
            try await apply(plan, loaded: loaded, at: now, connection, logger: logger)
            return .success(outcome)
        } catch let error as LedgerError {
            guard let refusal = EventPlanner.refusal(error, prepared: prepared) else { throw error }
            try await appendEvents([refusal], at: now, connection, logger: logger)
            return .failure(error)
        }
    }

    @discardableResult
    public func apply(_ notification: VerifiedNotification) async throws(LedgerError) -> NotificationOutcome {
        try await metrics.measureNotification { () throws(LedgerError) in
            let now = configuration.now()
            let prepared = try planner.prepare(notification, receivedAt: now)
            let planner = self.planner
            let logger = self.logger
            return try await withConnection { connection -> NotificationOutcome in
                try await Self.apply(prepared, planner: planner, at: now, connection, logger: logger)
            }
        }
    }

    /// Takes a prepared notification once (two round trips): ``apply(_:)``'s and the bulk
    /// path's. A ``LedgerError`` thrown comes from the planner, before anything was written;
    /// any other error is the database's.
    static func apply(
        _ prepared: PreparedNotification, planner: LedgerPlanner, at now: Date, _ connection: PostgresConnection, logger: Logger
    ) async throws -> NotificationOutcome {
        let uuid = prepared.notification.summary.notificationUUID
        let loaded = try await load(
            connection, families: prepared.familyKeys, transactions: prepared.transactionKeys, notification: uuid, logger: logger
        )
        if loaded.notificationExists {
            let owner = prepared.transaction.flatMap { loaded.state.families[$0.familyKey]?.account }
            return NotificationOutcome(notificationUUID: uuid, isDuplicate: true, account: owner, transactionId: prepared.transaction?.value.transactionId)
        }
        let (plan, outcome) = try planner.plan(prepared, state: loaded.state)
        try await apply(plan, loaded: loaded, at: now, connection, logger: logger)
        return outcome
    }

    public func entitlements(for account: AccountID, at date: Date) async throws(LedgerError) -> Entitlements {
        try await metrics.measureQuery { () throws(LedgerError) in
            let logger = self.logger
            let records = try await withConnection { connection in
                try await Self.loadAccount(connection, account, logger: logger)
            }
            return EntitlementCalculator.entitlements(for: account, records: records, at: date)
        }
    }

    /// The account's holdings and grants in one statement (``AccountWithGrantsSQL``): one round
    /// trip and one pooled connection for the check an app makes on every request.
    public func entitlementFacts(for account: AccountID, at date: Date) async throws(LedgerError) -> EntitlementFacts {
        try await metrics.measureQuery { () throws(LedgerError) in
            let logger = self.logger
            let (records, grants) = try await withConnection { connection in
                try await Self.loadAccountWithGrants(connection, account, logger: logger)
            }
            return EntitlementFacts(holdings: EntitlementCalculator.entitlements(for: account, records: records, at: date), grants: grants)
        }
    }

    public func balance(of productId: String, for account: AccountID) async throws(LedgerError) -> ConsumableBalance {
        try LedgerPlanner.checkProductId(productId)
        return try await withConnection { connection in
            let rows = try await Self.execute(BalanceSQL.self, connection, [.text(account.rawValue), .text(productId)], logger: self.logger)
            guard let row = rows.first else { return ConsumableBalance(productId: productId, purchased: 0, refunded: 0, consumed: 0) }
            return ConsumableBalance(productId: productId, purchased: try row.int(0), refunded: try row.int(1), consumed: try row.int(2))
        }
    }

    @discardableResult
    public func consume(
        _ productId: String, quantity: Int, idempotencyKey: String, for account: AccountID, at date: Date
    ) async throws(LedgerError) -> ConsumptionReceipt {
        try await metrics.measureConsumption { () throws(LedgerError) in
            try LedgerPlanner.checkConsumption(productId: productId, quantity: quantity, idempotencyKey: idempotencyKey)
            let logger = self.logger
            let recordedAt = configuration.now()
            return try await withConnection { connection in
                try await Self.consume(
                    connection, productId: productId, quantity: quantity, key: idempotencyKey, account: account, at: date, recordedAt: recordedAt,
                    logger: logger
                )
            }
        }
    }

    public func events(after sequence: Int64, limit: Int) async throws(LedgerError) -> [LedgerEvent] {
        try LedgerPlanner.checkEventPage(after: sequence, limit: limit)
        return try await withConnection { connection in
            try await Self.settleEvents(connection, logger: self.logger)
            return try await Self.loadEvents(connection, after: sequence, limit: limit, logger: self.logger)
        }
    }

    public func lastEventSequence() async throws(LedgerError) -> Int64 {
        try await withConnection { connection in
            // Numbered first, as a page of events would be: the newest committed event counts.
            try await Self.settleEvents(connection, logger: self.logger)
            let rows = try await connection.query(
                "SELECT COALESCE(MAX(sequence), 0)::bigint FROM ledger_events WHERE sequence IS NOT NULL", logger: self.logger
            )
            for try await row in rows { return try row.makeRandomAccess().integer(0) }
            return 0
        }
    }

    @discardableResult
    public func pruneEvents(recordedBefore cutoff: Date, limit: Int) async throws(LedgerError) -> EventPruning {
        try LedgerPlanner.checkPruneLimit(limit)
        return try await withConnection { connection in
            let rows = try await Self.execute(
                PruneEventsSQL.self, connection, [.integer(cutoff.ledgerMilliseconds), .integer(Int64(limit))], logger: self.logger
            )
            guard let row = rows.first else { throw LedgerError(.storage, reason: "the pruning function answered no row") }
            return EventPruning(deleted: try row.int(0), prunedThrough: try row.integer(1))
        }
    }

    /// Numbers every event committed before the call, waiting up to `limit` (reads wait at most
    /// a second). Transaction ids are the whole server's: a write transaction in another
    /// database of the same server (a `CREATE DATABASE` on a busy test machine) holds numbering
    /// back until it ends. Tests call this before asserting on the stream.
    package func settleEvents(within limit: Duration) async throws(LedgerError) {
        try await withConnection { connection in
            try await Self.settleEvents(connection, within: limit, logger: self.logger)
        }
    }

    public func timeline(for account: AccountID, before sequence: Int64?, limit: Int) async throws(LedgerError) -> [LedgerEvent] {
        try BrowsingQuery.checkTimeline(before: sequence, limit: limit)
        return try await withConnection { connection in
            try await Self.settleEvents(connection, logger: self.logger)
            return try await Self.execute(
                TimelineSQL.self, connection, [.text(account.rawValue), .integer(sequence ?? .max), .integer(Int64(limit))], logger: self.logger
            ).map { row in try LedgerEvent(stored: Array(try row.text(1).utf8), sequence: try row.integer(0)) }
        }
    }

    public func search(_ term: String, limit: Int) async throws(LedgerError) -> [RecordedTransaction] {
        let term = try BrowsingQuery.checkSearch(term, limit: limit)
        return try await withConnection { connection in
            try await Self.execute(
                SearchSQL.self, connection, [.text(term), .optional(BrowsingQuery.token(term)), .integer(Int64(limit))], logger: self.logger
            ).map { row in try Self.decodeTransaction(row, offset: 0).value }
        }
    }

    public func activity(days: Int, endingAt date: Date) async throws(LedgerError) -> [DailyActivity] {
        let window = try BrowsingQuery.window(days: days, endingAt: date)
        return try await withConnection { connection in
            var tally = window
            let first = tally.firstDayNumber
            for row in try await Self.execute(
                ActivityDaysSQL.self, connection, [.integer(first), .integer(tally.endDayNumber)], logger: self.logger
            ) {
                let day = try row.integer(0), name = try row.text(1), count = Int(try row.integer(2))
                guard let kind = ActivityKind(rawValue: name) else {
                    throw LedgerError(.storage, reason: "ledger_activity_days holds an unknown kind '\(name)'")
                }
                if day < first { tally.addActiveBeforeWindow(count) } else { tally.add(kind, day: day, count: count) }
            }
            return tally.result()
        }
    }

    /// Reads the due families and their rows, and writes their events and next transitions
    /// with the apply function, which refuses the whole write (retried) when one of the families
    /// changed since it was read — so two instances never append a family's transition twice,
    /// and a write racing the clock replans with the moved transition.
    @discardableResult
    public func emitElapsedTransitions(until date: Date, limit: Int) async throws(LedgerError) -> Int {
        try SubscriptionClock.checkLimit(limit)
        let date = date.ledgerNormalized
        let logger = self.logger
        let now = configuration.now()
        let grants = try await emitEndedGrants(at: date, limit: limit)
        return try await grants + withConnection { connection in
            let due = try await Self.rows(connection, """
                SELECT environment, original_transaction_id FROM ledger_families
                WHERE next_transition_at <= $1 ORDER BY next_transition_at, environment, original_transaction_id LIMIT $2
                """, [.integer(date.ledgerMilliseconds), .integer(Int64(limit))], logger: logger
            ).map { row in FamilyKey(environment: AppStoreEnvironment(rawValue: try row.text(0)), originalTransactionId: try row.text(1)) }
            guard !due.isEmpty else { return 0 }
            let loaded = try await Self.load(connection, families: due, transactions: [], notification: nil, logger: logger)
            // Another instance may have taken some between the two reads.
            let stillDue = due.filter { key in loaded.state.families[key]?.nextTransitionAt.map { $0 <= date } ?? false }
            guard !stillDue.isEmpty else { return 0 }
            var plan = LedgerWritePlan()
            (plan.events, plan.nextTransitions) = SubscriptionClock.transitions(of: stillDue, in: loaded.state, until: date)
            try await Self.apply(plan, loaded: loaded, at: now, connection, logger: logger)
            return stillDue.count
        }
    }

    public func transaction(_ transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> RecordedTransaction? {
        try await withConnection { connection in
            try await Self.loadTransactions(
                connection, [TransactionKey(environment: environment, transactionId: transactionId)], logger: self.logger
            ).first?.value
        }
    }

    public func storedProof(_ digest: ProofDigest) async throws(LedgerError) -> [UInt8]? {
        let sealed = try await withConnection { connection -> SealedProof? in
            let rows = try await Self.execute(ProofSQL.self, connection, [.bytes(digest.bytes)], logger: self.logger)
            guard let row = rows.first else { return nil }
            return SealedProof(keyID: try row.text(0), combined: try row.bytes(1))
        }
        guard let sealed else { return nil }
        guard let encryption = configuration.encryption else {
            throw LedgerError(.unknownEncryptionKey, reason: "a stored proof was sealed with key '\(sealed.keyID)', and no key is configured")
        }
        return try encryption.open(sealed, digest: digest)
    }

    public func checkIntegrity() async throws(LedgerError) -> LedgerIntegrityReport {
        let figures = try await transaction(readOnly: true) { connection in
            try await Self.invariants(connection, logger: self.logger)
        }
        return LedgerIntegrityReport(backend: backend, problems: figures.problems)
    }

    public func close() async {
        let task = state.withLock { state -> Task<Void, Never>? in
            state.isClosed = true
            defer { state.runTask = nil }
            return state.runTask
        }
        if let task {
            task.cancel()
            await task.value
        }
    }

    // MARK: Transactions

    private var isClosed: Bool { state.withLock { $0.isClosed } }

    /// Runs `body` on a pooled connection inside `BEGIN … COMMIT`, rolling back on error and
    /// retrying retryable failures (serialization, deadlock, a lost insert race, a lost
    /// connection) up to five times.
    func transaction<T: Sendable>(
        readOnly: Bool = false, bounded: Bool = true, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(LedgerError) -> T {
        let logger = self.logger
        let begin: PostgresQuery = readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN"
        return try await withRetries(bounded: bounded) {
            try await self.client.withConnection { connection in
                try await connection.query(begin, logger: logger)
                do {
                    let result = try await body(connection)
                    try await connection.query("COMMIT", logger: logger)
                    return result
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)  // the body's error is what matters
                    throw error
                }
            }
        }
    }

    /// Runs a single-statement read on a pooled connection, with retries (within
    /// ``operationTimeout`` when `bounded`).
    func withConnection<T: Sendable>(
        bounded: Bool = true, _ body: @escaping @Sendable (PostgresConnection) async throws -> T
    ) async throws(LedgerError) -> T {
        try await withRetries(bounded: bounded) {
            try await self.client.withConnection { connection in try await body(connection) }
        }
    }

    /// Runs `body` with retries, within ``operationTimeout`` when `bounded` and one is set.
    private func withRetries<T: Sendable>(bounded: Bool = true, _ body: @escaping @Sendable () async throws -> T) async throws(LedgerError) -> T {
        guard bounded, let timeout = operationTimeout else { return try await retrying(body) }
        return try await withLedgerDeadline(timeout) { () throws(LedgerError) in try await self.retrying(body) }
    }

    private func retrying<T: Sendable>(_ body: @Sendable () async throws -> T) async throws(LedgerError) -> T {
        var attempt = 0
        while true {
            if isClosed { throw LedgerError(.closed, reason: "the ledger is closed") }
            do {
                return try await body()
            } catch {
                let mapped = Self.ledgerError(error)
                attempt += 1
                guard mapped.isRetryable, attempt < 6, !Task.isCancelled else { throw mapped }
                logger.debug("retrying a PostgreSQL transaction", metadata: ["attempt": "\(attempt)", "error": "\(mapped.reason)"])
                do {
                    try await Task.sleep(for: Self.retryBackoff.delay(afterFailures: attempt))
                } catch {
                    throw mapped
                }
            }
        }
    }

    /// The pause before each retry: a random share (full jitter) of 2, 4, 8, 16 and 32 ms. Two
    /// writers that refused each other (a family both changed) and waited the same fixed
    /// pause met again at their retries, in step, until one ran out of attempts; a random
    /// pause sets them apart.
    static let retryBackoff = Backoff(first: .milliseconds(2), maximum: .milliseconds(32), jitter: 1)

    /// Maps any error to a ``LedgerError``: server errors by SQLSTATE (never including bound
    /// values), connection failures as retryable.
    static func ledgerError(_ error: any Error) -> LedgerError {
        if let error = error as? LedgerError { return error }
        if let error = error as? PSQLError {
            let state = error.serverInfo?[.sqlState]
            let retryableStates: Set<String> = ["40001", "40P01", "23505", "55P03", "57P01", "08000", "08003", "08006"]
            if error.code == .server {
                return LedgerError(.storage, reason: "PostgreSQL: \(describe(error))", isRetryable: state.map(retryableStates.contains) ?? false)
            }
            // A connection the client closed (after a cancelled query on it, say) failed the call
            // before it took effect or after it committed; every ledger operation is idempotent,
            // so another connection may retry it.
            let retryable = [PSQLError.Code.connectionError, .serverClosedConnection, .uncleanShutdown, .clientClosedConnection].contains(error.code)
            return LedgerError(.storage, reason: "PostgreSQL connection: \(error.code)", isRetryable: retryable)
        }
        if error is CancellationError {
            return LedgerError(.storage, reason: "the operation was cancelled", isRetryable: true)
        }
        return LedgerError(.storage, reason: "PostgreSQL: \(String(describing: type(of: error)))", isRetryable: false)
    }

    /// A description of a PostgreSQL error with its SQLSTATE and primary message only.
    package static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else {
            if let error = error as? LedgerError { return error.reason }
            return String(describing: type(of: error))
        }
        let state = error.serverInfo?[.sqlState] ?? "-"
        let message = error.serverInfo?[.message] ?? "\(error.code)"
        return "\(message) (SQLSTATE \(state))"
    }
}

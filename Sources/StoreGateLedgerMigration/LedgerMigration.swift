public import Logging
import NIOPosix
import StoreGateLedgerSQLite

/// Moves a whole ledger from SQLite to PostgreSQL and proves the copy: every table, in key
/// order, in batches, then a row count and a SHA-256 digest per table computed on both sides
/// from what each database returns.
///
/// The source is opened read-only and read in one snapshot; its schema version must be this
/// StoreGate's. The target must hold no ledger rows; it is created to the current schema by the
/// PostgreSQL ledger's own migrations, filled with `COPY` (``batchRows`` rows per statement and
/// transaction), its event numbering moved past the copied events, and analyzed. Sealed proofs
/// are copied as stored, never opened; webhook secrets and API key digests too, never printed.
///
/// ```swift
/// let migration = try LedgerMigration(from: "sqlite:/var/lib/storegate/ledger.sqlite", to: "postgres://storegate@db/storegate")
/// let report = try await migration.migrate { print($0) }
/// ```
public struct LedgerMigration: Sendable {
    /// Where the ledger is read.
    public let source: LedgerLocation
    /// Where it is written (or, for ``verify(progress:)``, compared).
    public let target: LedgerLocation
    /// Rows per `COPY` (each its own transaction); fewer when they pass 8 MB.
    public var batchRows: Int
    /// How long to wait for the first PostgreSQL connection.
    public var connectTimeout: Duration
    /// Where PostgresNIO's and the migration's debug messages go.
    public var logger: Logger

    /// A migration between two locations (`sqlite:PATH`, `postgres://…`).
    ///
    /// - Throws: ``LedgerMigrationError/Code/invalidLocation`` for a malformed location;
    ///   ``LedgerMigrationError/Code/unsupportedDirection`` unless it is SQLite to PostgreSQL.
    public init(
        from source: String, to target: String, batchRows: Int = 5000, connectTimeout: Duration = .seconds(30),
        logger: Logger = Logger(label: "storegate.migrate")
    ) throws(LedgerMigrationError) {
        let from = try LedgerLocation(parsing: source)
        let to = try LedgerLocation(parsing: target)
        guard case .sqlite = from, case .postgres = to else {
            throw LedgerMigrationError(
                .unsupportedDirection, reason: "this StoreGate migrates from sqlite:PATH to postgres://… only (asked: \(from) to \(to))"
            )
        }
        self.source = from
        self.target = to
        self.batchRows = max(1, batchRows)
        self.connectTimeout = connectTimeout
        self.logger = logger
    }

    /// Copies every table, moves the target's sequences on, analyzes it, then compares both sides.
    ///
    /// - Parameter progress: Called after each table is copied and after each is compared.
    /// - Returns: The comparison, every table equal.
    /// - Throws: a ``LedgerMigrationError``: the source refused (missing, schema version), the
    ///   target refused (not empty, naming a table) or failed, or
    ///   ``LedgerMigrationError/Code/verificationFailed`` naming the tables that differ.
    @discardableResult
    public func migrate(progress: @escaping @Sendable (LedgerMigrationProgress) -> Void = { _ in }) async throws(LedgerMigrationError) -> LedgerMigrationReport {
        let (path, url) = try locations()
        let source = try await Self.blocking { () throws(LedgerMigrationError) in try SQLiteLedgerSource(path: path) }
        let batchRows = self.batchRows
        return try await PostgresLedgerTarget.withTarget(url: url, logger: logger, connectTimeout: connectTimeout) { target throws(LedgerMigrationError) in
            try await target.checkEmpty(MigratedTable.all)
            try await target.migrate()
            try await target.checkEmpty(MigratedTable.all)
            for table in MigratedTable.all {
                let started = ContinuousClock.now
                let rows = try await Self.copy(table, from: source, to: target, batchRows: batchRows)
                progress(.copied(table: table.name, rows: rows, seconds: Self.seconds(since: started)))
            }
            let finishing = ContinuousClock.now
            try await target.finish()
            progress(.finished(seconds: Self.seconds(since: finishing)))
            var compared: [LedgerMigrationReport.Table] = []
            for table in MigratedTable.all {
                let started = ContinuousClock.now
                let theirs = try await target.digest(table)
                compared.append(Self.compared(table, ours: source.digests[table.name] ?? TableDigest(), theirs: theirs, since: started, progress))
            }
            return try Self.verdict(LedgerMigrationReport(tables: compared), target: target.location)
        }
    }

    /// Compares both sides without copying: per table, the row count and the digest.
    ///
    /// - Parameter progress: Called after each table is compared.
    /// - Returns: The comparison, every table equal.
    /// - Throws: ``LedgerMigrationError/Code/verificationFailed`` naming the tables that differ;
    ///   source or target errors as ``migrate(progress:)`` (the target's schema version must be
    ///   this StoreGate's; nothing is written to either side).
    @discardableResult
    public func verify(progress: @escaping @Sendable (LedgerMigrationProgress) -> Void = { _ in }) async throws(LedgerMigrationError) -> LedgerMigrationReport {
        let (path, url) = try locations()
        let source = try await Self.blocking { () throws(LedgerMigrationError) in try SQLiteLedgerSource(path: path) }
        let batchRows = self.batchRows
        return try await PostgresLedgerTarget.withTarget(url: url, logger: logger, connectTimeout: connectTimeout) { target throws(LedgerMigrationError) in
            try await target.checkSchema()
            var compared: [LedgerMigrationReport.Table] = []
            for table in MigratedTable.all {
                let started = ContinuousClock.now
                // Both sides read at once: the source on NIO's blocking pool, the target over the wire.
                async let theirs = Self.result { () throws(LedgerMigrationError) in try await target.digest(table) }
                try await Self.read(table, from: source, batchRows: batchRows)
                let digest = try await theirs.get()
                compared.append(Self.compared(table, ours: source.digests[table.name] ?? TableDigest(), theirs: digest, since: started, progress))
            }
            return try Self.verdict(LedgerMigrationReport(tables: compared), target: target.location)
        }
    }

    // MARK: Steps

    /// One table's comparison of the two sides' digests, reported to `progress`.
    private static func compared(
        _ table: MigratedTable, ours: TableDigest, theirs: TableDigest, since started: ContinuousClock.Instant,
        _ progress: (LedgerMigrationProgress) -> Void
    ) -> LedgerMigrationReport.Table {
        let result = LedgerMigrationReport.Table(
            name: table.name, sourceRows: ours.rows, targetRows: theirs.rows, sourceDigest: ours.hex(), targetDigest: theirs.hex()
        )
        progress(.compared(result, seconds: seconds(since: started)))
        return result
    }

    private func locations() throws(LedgerMigrationError) -> (path: String, url: String) {
        guard case .sqlite(let path) = source, case .postgres(let url) = target else {
            throw LedgerMigrationError(.unsupportedDirection, reason: "this StoreGate migrates from sqlite:PATH to postgres://… only")
        }
        return (path, url)
    }

    /// Copies one table in batches: the next batch is read while the previous one is written.
    private static func copy(
        _ table: MigratedTable, from source: SQLiteLedgerSource, to target: PostgresLedgerTarget, batchRows: Int
    ) async throws(LedgerMigrationError) -> Int {
        let limit = table.key.isEmpty ? Int.max : batchRows
        var batch = try await blocking { () throws(LedgerMigrationError) in try source.read(table, after: nil, limit: limit, copy: true) }
        var rows = 0
        while batch.rows > 0 {
            rows += batch.rows
            let text = batch.copy ?? CopyText(capacity: 0)
            guard !table.key.isEmpty, let after = batch.lastKey else {
                try await target.copy(table, text)
                break
            }
            async let next = result { () throws(LedgerMigrationError) in
                try await blocking { () throws(LedgerMigrationError) in try source.read(table, after: after, limit: limit, copy: true) }
            }
            try await target.copy(table, text)
            batch = try await next.get()
        }
        return rows
    }

    /// Reads one table whole into the source's digest.
    private static func read(_ table: MigratedTable, from source: SQLiteLedgerSource, batchRows: Int) async throws(LedgerMigrationError) {
        let limit = table.key.isEmpty ? Int.max : batchRows
        var after: [SQLiteValue]? = nil
        while true {
            let key = after
            let batch = try await blocking { () throws(LedgerMigrationError) in try source.read(table, after: key, limit: limit, copy: false) }
            guard batch.rows > 0, !table.key.isEmpty, let last = batch.lastKey else { return }
            after = last
        }
    }

    private static func verdict(_ report: LedgerMigrationReport, target: String) throws(LedgerMigrationError) -> LedgerMigrationReport {
        let different = report.mismatches
        guard let first = different.first else { return report }
        throw LedgerMigrationError(
            .verificationFailed, table: first.name,
            reason: "\(different.map(\.name).joined(separator: ", ")) differ between the source and \(target) (rows \(first.sourceRows) against \(first.targetRows))"
        )
    }

    /// Runs blocking SQLite work on NIO's blocking pool, off the cooperative threads.
    private static func blocking<T: Sendable>(_ work: @escaping @Sendable () throws(LedgerMigrationError) -> T) async throws(LedgerMigrationError) -> T {
        let outcome: Result<T, LedgerMigrationError>
        do {
            outcome = try await NIOThreadPool.singleton.runIfActive { () -> Result<T, LedgerMigrationError> in
                do throws(LedgerMigrationError) { return .success(try work()) } catch { return .failure(error) }
            }
        } catch {
            throw LedgerMigrationError(.sourceUnavailable, reason: "the blocking pool is not running")
        }
        return try outcome.get()
    }

    private static func result<T: Sendable>(_ work: () async throws(LedgerMigrationError) -> T) async -> Result<T, LedgerMigrationError> {
        do throws(LedgerMigrationError) { return .success(try await work()) } catch { return .failure(error) }
    }

    private static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }
}

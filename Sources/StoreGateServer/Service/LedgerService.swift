public import Logging
public import ServiceLifecycle
public import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite

/// Keeps the ledger open for the life of the service and closes it last.
///
/// It sits first among the application's services: a `ServiceGroup` shuts services down in
/// reverse order, so on SIGTERM or SIGINT the HTTP server stops accepting connections and
/// finishes the requests in flight first, and only then is the ledger closed.
struct LedgerService: Service {
    let ledger: any Ledger
    let logger: Logger

    func run() async throws {
        do {
            try await gracefulShutdown()
        } catch {
            // Cancelled rather than shut down gracefully: close all the same.
        }
        await ledger.close()
        logger.info("ledger closed", metadata: ["backend": "\(ledger.backend)"])
    }
}

/// An opened ledger and what the service must run for it.
///
/// PostgreSQL's connection pool (`PostgresClient`) is a swift-service-lifecycle `Service`: it
/// runs in the application's `ServiceGroup` (added before ``LedgerService``, so it stops
/// after the ledger closes), and the schema is migrated before the server accepts a request
/// (``prepare``, run by the application's `beforeServerStarts`). SQLite needs neither.
public struct OpenedLedger: Sendable {
    /// The ledger.
    public let ledger: any Ledger
    /// Services that must run for the ledger's lifetime (PostgreSQL's connection pool).
    public let services: [any Service]
    /// Work to finish before the first request (PostgreSQL's migrations, bounded in time).
    public let prepare: @Sendable () async throws -> Void

    /// A ledger that needs nothing run for it (in-memory, SQLite).
    public init(_ ledger: any Ledger) {
        self.init(ledger, services: [], prepare: {})
    }

    init(_ ledger: any Ledger, services: [any Service], prepare: @escaping @Sendable () async throws -> Void) {
        self.ledger = ledger
        self.services = services
        self.prepare = prepare
    }
}

/// Opens the ledger a configuration names.
public enum LedgerOpener {
    /// Opens the configured SQLite file (migrated) or PostgreSQL database (its pool to run as
    /// a service, its migrations to apply before serving).
    ///
    /// Bootstrap the process metrics first (``ServerMetrics/bootstrapProcessMetrics()``): the
    /// ledger creates its instruments when it opens.
    ///
    /// - Parameters:
    ///   - configuration: The database and the ledger's settings.
    ///   - logger: The ledger's logger.
    ///   - connectTimeout: How long PostgreSQL may take to answer at start-up (migrating then
    ///     has no deadline).
    /// - Throws: ``ConfigurationError`` naming `STOREGATE_DATABASE` when the store cannot be
    ///   opened; for PostgreSQL, ``OpenedLedger/prepare`` throws one when the database cannot
    ///   be reached (within `connectTimeout`) or migrated.
    public static func open(
        _ configuration: ServerConfiguration, logger: Logger, connectTimeout: Duration = .seconds(15)
    ) throws(ConfigurationError) -> OpenedLedger {
        var ledgerLogger = logger
        ledgerLogger[metadataKey: "component"] = "ledger"
        let ledgerConfiguration = LedgerConfiguration(
            catalog: configuration.catalog,
            accountTokenPolicy: configuration.accountTokenPolicy,
            transferPolicy: configuration.transferPolicy,
            encryption: configuration.encryption,
            logger: ledgerLogger
        )
        let setting = ServerConfiguration.Setting.database.rawValue
        let database = configuration.database
        do {
            switch database {
            case .sqlite(let path):
                return OpenedLedger(try SQLiteLedger(
                    path: path, configuration: ledgerConfiguration,
                    options: SQLiteLedger.Options(
                        synchronous: configuration.sqliteSynchronous, busyTimeout: configuration.databaseTimeout,
                        cachedAccounts: configuration.sqliteCachedAccounts,
                        // Twelve rows an account on average (about 25 MB at most with the default).
                        cachedRows: configuration.sqliteCachedAccounts * 12,
                        pageCacheBytes: configuration.sqlitePageCacheMB << 20,
                        mappedBytes: configuration.sqliteMmapMB << 20
                    )
                ))
            case .postgres(let url):
                let client = try PostgresLedger.client(url: url, maximumConnections: configuration.postgresMaxConnections, logger: ledgerLogger)
                let ledger = PostgresLedger(client: client, configuration: ledgerConfiguration, operationTimeout: configuration.databaseTimeout)
                return OpenedLedger(ledger, services: [client]) {
                    do throws(LedgerError) {
                        // The deadline is for reaching the database. Migrating then takes as long as
                        // it takes: a migration of a large database cut off at start-up would be
                        // rolled back and tried again at every restart, and a second instance waits
                        // on the first one's migration lock.
                        try await withLedgerDeadline(connectTimeout) { () async throws(LedgerError) in try await ledger.ping() }
                        logger.info("migrating the PostgreSQL ledger (if its schema is older)")
                        try await ledger.migrate()
                    } catch {
                        throw ConfigurationError(setting, "cannot open the ledger at \(database): \(error.code): \(error.reason)")
                    }
                }
            }
        } catch {
            throw ConfigurationError(setting, "cannot open the ledger at \(database): \(error.code): \(error.reason)")
        }
    }
}

extension OpenedLedger {
    /// Runs the ledger's services (PostgreSQL's connection pool) while `body` uses the ledger,
    /// after ``prepare``; closes the ledger and stops the services afterwards. For one-shot
    /// commands (`storegate analytics rebuild`), not the service.
    public func use<T: Sendable>(_ body: @Sendable (any Ledger) async throws -> T) async throws -> T {
        let services = self.services
        let runner = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for service in services { group.addTask { try await service.run() } }
                try await group.waitForAll()
            }
        }
        defer { runner.cancel() }
        do {
            try await prepare()
            let result = try await body(ledger)
            await ledger.close()
            return result
        } catch {
            await ledger.close()
            throw error
        }
    }
}

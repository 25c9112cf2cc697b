public import Logging
import ServiceLifecycle
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

/// Opens the ledger a configuration names.
public enum LedgerOpener {
    /// Opens (and migrates) the configured SQLite file or PostgreSQL database.
    ///
    /// Bootstrap the process metrics first (``ServerMetrics/bootstrapProcessMetrics()``): the
    /// ledger creates its instruments when it opens.
    ///
    /// - Parameters:
    ///   - configuration: The database and the ledger's settings.
    ///   - logger: The ledger's logger.
    ///   - connectTimeout: How long PostgreSQL may take to answer and migrate.
    /// - Throws: ``ConfigurationError`` naming `STOREGATE_DATABASE` when the store cannot be
    ///   opened, reached (within `connectTimeout`) or migrated.
    public static func open(
        _ configuration: ServerConfiguration, logger: Logger, connectTimeout: Duration = .seconds(15)
    ) async throws(ConfigurationError) -> any Ledger {
        var ledgerLogger = logger
        ledgerLogger[metadataKey: "component"] = "ledger"
        let ledgerConfiguration = LedgerConfiguration(
            catalog: configuration.catalog,
            accountTokenPolicy: configuration.accountTokenPolicy,
            encryption: configuration.encryption,
            logger: ledgerLogger
        )
        let setting = ServerConfiguration.Setting.database.rawValue
        do {
            switch configuration.database {
            case .sqlite(let path):
                return try SQLiteLedger(
                    path: path, configuration: ledgerConfiguration,
                    options: SQLiteLedger.Options(synchronous: configuration.sqliteSynchronous, busyTimeout: configuration.databaseTimeout)
                )
            case .postgres(let url):
                return try await withLedgerDeadline(connectTimeout) { () async throws(LedgerError) -> any Ledger in
                    try await PostgresLedger.connect(
                        url: url, configuration: ledgerConfiguration, maximumConnections: configuration.postgresMaxConnections,
                        operationTimeout: configuration.databaseTimeout
                    )
                }
            }
        } catch {
            throw ConfigurationError(setting, "cannot open the ledger at \(configuration.database): \(error.code): \(error.reason)")
        }
    }
}

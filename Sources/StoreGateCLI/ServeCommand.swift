import ArgumentParser
import Foundation
import Logging
import OTel
import ServiceLifecycle
import StoreGateLedger
import StoreGateServer

/// `storegate serve`: run the HTTP service.
///
/// Every flag mirrors an environment variable (`--port` ↔ `STOREGATE_PORT`); a flag wins over
/// its variable. Secrets given inline (API keys, ledger keys, the shared secret) are read from
/// the environment or from files only, never from flags, which other users of the machine can
/// see. A bad setting stops start-up with one line naming it.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the StoreGate HTTP service.",
        discussion: """
            Defaults: 127.0.0.1:8080, ledger in ./storegate.sqlite. Without any API key configured, \
            a key file (storegate-api-keys, mode 0600) is created beside the SQLite database and used. \
            Every flag has an environment variable (STOREGATE_<FLAG>, e.g. STOREGATE_BUNDLE_IDS); \
            secrets are environment-only: STOREGATE_API_KEYS, STOREGATE_LEDGER_KEYS, STOREGATE_SHARED_SECRET \
            (or their *_FILE variants). SIGTERM/SIGINT drain requests in flight, then close the ledger.
            """
    )

    @Option(help: "Address to listen on (STOREGATE_HOST; default 127.0.0.1).") var host: String?
    @Option(help: "Port to listen on, 0 for any (STOREGATE_PORT; default 8080).") var port: String?
    @Option(help: "sqlite:PATH or postgres://user:password@host:port/database (STOREGATE_DATABASE; default sqlite:./storegate.sqlite).") var database: String?
    @Option(name: .customLong("api-keys-file"), help: "API key file: 'name secret [permission ...]' per line (STOREGATE_API_KEYS_FILE).") var apiKeysFile: String?
    @Option(name: .customLong("bundle-ids"), help: "Accepted bundle ids, comma-separated (STOREGATE_BUNDLE_IDS).") var bundleIds: String?
    @Option(name: .customLong("app-versions"), help: "Accepted app versions: VERSION or BUNDLE_ID=VERSION, comma-separated (STOREGATE_APP_VERSIONS).") var appVersions: String?
    @Option(name: .customLong("app-apple-ids"), help: "App Store app ids: ID or BUNDLE_ID=ID, comma-separated (STOREGATE_APP_APPLE_IDS).") var appAppleIds: String?
    @Option(help: "Accepted environments, comma-separated (STOREGATE_ENVIRONMENTS; default production,sandbox).") var environments: String?
    @Option(name: .customLong("trust-dir"), help: "Directory of root certificates: Apple roots and opt-in anchors (STOREGATE_TRUST_DIR).") var trustDir: String?
    @Option(name: .customLong("ledger-keys-file"), help: "File holding id=BASE64KEY entries for encrypting stored proofs (STOREGATE_LEDGER_KEYS_FILE).") var ledgerKeysFile: String?
    @Option(name: .customLong("shared-secret-file"), help: "File holding the App Store shared secret for /verifyReceipt (STOREGATE_SHARED_SECRET_FILE).") var sharedSecretFile: String?
    @Option(name: .customLong("appstore-key-id"), help: "App Store Server API key id (STOREGATE_APPSTORE_KEY_ID).") var appStoreKeyId: String?
    @Option(name: .customLong("appstore-issuer-id"), help: "App Store Server API issuer id (STOREGATE_APPSTORE_ISSUER_ID).") var appStoreIssuerId: String?
    @Option(name: .customLong("appstore-private-key-file"), help: "App Store Server API .p8 key file (STOREGATE_APPSTORE_PRIVATE_KEY_FILE).") var appStorePrivateKeyFile: String?
    @Option(name: .customLong("max-body-bytes"), help: "Largest request body, in bytes (STOREGATE_MAX_BODY_BYTES; default 4194304).") var maxBodyBytes: String?
    @Option(name: .customLong("products-file"), help: "Product catalog JSON: types and subscription groups (STOREGATE_PRODUCTS_FILE).") var productsFile: String?
    @Option(name: .customLong("account-token-namespace"), help: "UUID namespace: appAccountToken = UUIDv5(namespace, account) (STOREGATE_ACCOUNT_TOKEN_NAMESPACE).") var accountTokenNamespace: String?
    @Option(name: .customLong("transfer-policy"), help: "refuse or transfer: another account's proof of an owned purchase is refused (409) or moves the purchase to it (STOREGATE_TRANSFER_POLICY; default refuse).") var transferPolicy: String?
    @Option(name: .customLong("sqlite-synchronous"), help: "normal or full (STOREGATE_SQLITE_SYNCHRONOUS; default normal).") var sqliteSynchronous: String?
    @Option(name: .customLong("postgres-max-connections"), help: "PostgreSQL pool size (STOREGATE_POSTGRES_MAX_CONNECTIONS; default 20).") var postgresMaxConnections: String?
    @Option(name: .customLong("database-timeout-ms"), help: "Longest wait for the database before a request answers 503 retryable (STOREGATE_DATABASE_TIMEOUT_MS; default 2000).") var databaseTimeoutMilliseconds: String?
    @Option(name: .customLong("log-level"), help: "trace, debug, info, notice, warning, error, critical (STOREGATE_LOG_LEVEL; default info).") var logLevel: String?
    @Option(name: .customLong("shutdown-grace-seconds"), help: "Longest graceful shutdown (STOREGATE_SHUTDOWN_GRACE_SECONDS; default 30).") var shutdownGraceSeconds: String?
    @Option(name: .customLong("webhooks-file"), help: "Webhook endpoints JSON: {\"endpoints\": [{\"name\", \"url\", \"secrets\": [\"…\"] (or \"secret\"), \"types\"}]} (STOREGATE_WEBHOOKS_FILE; docs/webhooks-signatures.md).") var webhooksFile: String?
    @Option(name: .customLong("webhook-allow-private"), help: "1: webhook URLs may reach loopback, private and link-local addresses (STOREGATE_WEBHOOK_ALLOW_PRIVATE; default 0; docs/webhooks-endpoints.md).") var webhookAllowPrivate: String?
    @Option(name: .customLong("api-key-rate-limit"), help: "Default rate limit of every API key without its own, requests/seconds such as 100/1 (STOREGATE_API_KEY_RATE_LIMIT; default unlimited; docs/api-keys.md).") var apiKeyRateLimit: String?
    @Option(name: .customLong("events-retention-days"), help: "Delete events recorded longer ago, 7-36500, never one still owed to a webhook endpoint (STOREGATE_EVENTS_RETENTION_DAYS; default: keep all).") var eventsRetentionDays: String?
    @Option(name: .customLong("console-session-minutes"), help: "How long a console sign-in lasts, 1-1440 (STOREGATE_CONSOLE_SESSION_MINUTES; default 480).") var consoleSessionMinutes: String?
    @Option(name: .customLong("console-secure-cookies"), help: "true: console cookies always Secure (STOREGATE_CONSOLE_SECURE_COOKIES; default false).") var consoleSecureCookies: String?
    @Option(name: .customLong("appstore-api-url"), help: "A stand-in's base URL: production at URL/production, sandbox at URL/sandbox (STOREGATE_APPSTORE_API_URL; not with the two below).") var appStoreAPIURL: String?
    @Option(name: .customLong("appstore-api-url-production"), help: "The App Store Server API's production base URL (STOREGATE_APPSTORE_API_URL_PRODUCTION; default https://api.storekit.apple.com).") var appStoreAPIURLProduction: String?
    @Option(name: .customLong("appstore-api-url-sandbox"), help: "The App Store Server API's sandbox base URL (STOREGATE_APPSTORE_API_URL_SANDBOX; default https://api.storekit-sandbox.apple.com).") var appStoreAPIURLSandbox: String?
    @Option(name: .customLong("sync"), help: "on or off: recover missed notifications from Apple when credentials are set (STOREGATE_SYNC; default on).") var sync: String?
    @Option(name: .customLong("sync-interval-seconds"), help: "Time between two syncs, 10-86400 (STOREGATE_SYNC_INTERVAL_SECONDS; default 900).") var syncIntervalSeconds: String?
    @Option(name: .customLong("sync-lookback-seconds"), help: "How far before the last synced time each sync reads again (STOREGATE_SYNC_LOOKBACK_SECONDS; default 3600).") var syncLookBackSeconds: String?
    @Option(name: .customLong("refresh-interval-seconds"), help: "Shortest time between two refreshes of one account, 0-86400 (STOREGATE_REFRESH_INTERVAL_SECONDS; default 60).") var refreshIntervalSeconds: String?
    @Option(name: .customLong("refresh-on-first-sight"), help: "on or off: refresh an account from Apple when a proof first shows one of its families (STOREGATE_REFRESH_ON_FIRST_SIGHT; default on).") var refreshOnFirstSight: String?
    @Option(name: .customLong("consumption"), help: "off or consented: answer Apple's consumption requests, stating the customers' consent the app collected (STOREGATE_CONSUMPTION; default off).") var consumption: String?
    @Option(name: .customLong("consumption-sample-content"), help: "on or off: the app offers a free sample or trial before purchase, as told to Apple (STOREGATE_CONSUMPTION_SAMPLE_CONTENT; default off).") var consumptionSampleContent: String?
    @Option(name: .customLong("consumption-refund-preference"), help: "none, decline, grant_full or grant_prorated, as told to Apple (STOREGATE_CONSUMPTION_REFUND_PREFERENCE; default none).") var consumptionRefundPreference: String?
    @Option(name: .customLong("commission"), help: "Apple's commission for estimated proceeds: standard (30), small-business (15) or a percentage, then product=percent exceptions, comma-separated (STOREGATE_COMMISSION; default standard).") var commission: String?
    @Option(name: .customLong("fx-rates-file"), help: "JSON exchange rates for analytics totals in one reporting currency (STOREGATE_FX_RATES_FILE; docs/analytics.md).") var fxRatesFile: String?
    @Option(name: .customLong("consumption-refund-policy"), help: "Rules choosing the refund preference per request, first match wins, e.g. 'consumed>=80%:decline; age<7d:grant_full; *:grant_prorated' (STOREGATE_CONSUMPTION_REFUND_POLICY; see docs/consumption.md).") var consumptionRefundPolicy: String?
    @Option(name: .customLong("sync-start"), help: "Where the first sync starts, e.g. 2026-06-01 (STOREGATE_SYNC_START; default 180 days back).") var syncStart: String?

    @Option(name: .customLong("finish-transactions"), help: "on or off: tell Apple each granted transaction is finished, with the sync's credentials (STOREGATE_FINISH_TRANSACTIONS; default off).") var finishTransactions: String?
    @Option(name: .customLong("account-linking"), help: "on or off: set the account's appAccountToken at Apple on purchases recorded without one (STOREGATE_ACCOUNT_LINKING; default on with STOREGATE_ACCOUNT_TOKEN_NAMESPACE).") var accountLinking: String?
    @Option(name: .customLong("offer-key-id"), help: "The In-App Purchase key id POST /v1/offers/sign signs with (STOREGATE_OFFER_KEY_ID; default: the App Store Server API key).") var offerKeyId: String?
    @Option(name: .customLong("offer-private-key-file"), help: "That key's .p8 file (STOREGATE_OFFER_PRIVATE_KEY_FILE).") var offerPrivateKeyFile: String?
    @Option(name: .customLong("offer-eligibility"), help: "any, subscribers or lapsed: who may have a promotional offer signed (STOREGATE_OFFER_ELIGIBILITY; default any).") var offerEligibility: String?

    /// The flags given, keyed by the environment variable each mirrors.
    var flagSettings: [ServerConfiguration.Setting: String?] {
        [
            .host: host, .port: port, .database: database, .apiKeysFile: apiKeysFile, .bundleIds: bundleIds,
            .appVersions: appVersions, .appAppleIds: appAppleIds, .environments: environments, .trustDirectory: trustDir,
            .ledgerKeysFile: ledgerKeysFile, .sharedSecretFile: sharedSecretFile, .appStoreKeyId: appStoreKeyId,
            .appStoreIssuerId: appStoreIssuerId, .appStorePrivateKeyFile: appStorePrivateKeyFile, .maxBodyBytes: maxBodyBytes,
            .productsFile: productsFile, .accountTokenNamespace: accountTokenNamespace, .transferPolicy: transferPolicy, .sqliteSynchronous: sqliteSynchronous,
            .postgresMaxConnections: postgresMaxConnections, .databaseTimeout: databaseTimeoutMilliseconds, .logLevel: logLevel,
            .shutdownGrace: shutdownGraceSeconds, .webhooksFile: webhooksFile, .eventsRetentionDays: eventsRetentionDays, .consoleSessionMinutes: consoleSessionMinutes,
            .consoleSecureCookies: consoleSecureCookies, .appStoreAPIURL: appStoreAPIURL,
            .appStoreAPIURLProduction: appStoreAPIURLProduction, .appStoreAPIURLSandbox: appStoreAPIURLSandbox, .sync: sync, .syncInterval: syncIntervalSeconds,
            .syncLookBack: syncLookBackSeconds, .syncStart: syncStart, .refreshInterval: refreshIntervalSeconds,
            .refreshOnFirstSight: refreshOnFirstSight, .consumption: consumption, .consumptionSampleContent: consumptionSampleContent,
            .consumptionRefundPreference: consumptionRefundPreference, .consumptionRefundPolicy: consumptionRefundPolicy, .commission: commission, .fxRatesFile: fxRatesFile,
            .webhookAllowPrivate: webhookAllowPrivate, .apiKeyRateLimit: apiKeyRateLimit,
            .finishTransactions: finishTransactions, .accountLinking: accountLinking, .offerKeyId: offerKeyId, .offerPrivateKeyFile: offerPrivateKeyFile, .offerEligibility: offerEligibility,
        ]
    }

    func run() async throws {
        // A file size limit (RLIMIT_FSIZE) then fails a write with EFBIG, which the ledger
        // answers like a full disk (503, retryable), instead of killing the process mid-commit.
        signal(SIGXFSZ, SIG_IGN)
        var environment = ProcessInfo.processInfo.environment
        for (setting, value) in flagSettings {
            if let value { environment[setting.rawValue] = value }
        }
        var configuration: ServerConfiguration
        var keyFile: (path: String, created: Bool)?
        do {
            configuration = try ServerConfiguration.load(environment: environment)
            if configuration.apiKeys.isEmpty {
                let development = try DevelopmentKeyFile.loadOrCreate(for: configuration.database)
                configuration.apiKeys = development.keys
                keyFile = (development.path, development.created)
            }
        } catch {
            throw CLIError(error.description)
        }

        let logLevel = configuration.logLevel
        // With traces on, every log line written inside a span carries its trace_id and span_id.
        LoggingSystem.bootstrap(
            { label, metadataProvider in
                var handler = DeferredMetadataLogHandler(StreamLogHandler.standardError(label: label, metadataProvider: metadataProvider))
                handler.logLevel = logLevel
                return handler
            },
            metadataProvider: configuration.exportsTraces ? OTel.makeLoggingMetadataProvider() : nil
        )
        var logger = Logger(label: "storegate")
        logger.logLevel = configuration.logLevel
        ServerMetrics.bootstrapProcessMetrics()
        var telemetry: [any Service] = []
        if configuration.exportsTraces {
            telemetry.append(try TraceExport.bootstrap(logger: logger))
        }

        let opened: OpenedLedger
        do {
            opened = try LedgerOpener.open(configuration, logger: logger)
        } catch {
            throw CLIError(error.description)
        }
        for warning in opened.ledger.startupWarnings {
            logger.warning("\(warning)")
        }
        for warning in configuration.startupWarnings {
            logger.warning("\(warning)")
        }
        if let keyFile {
            logger.warning(
                "no API key is configured: using the key file \(keyFile.path)\(keyFile.created ? ", created now" : "") (set STOREGATE_API_KEYS or STOREGATE_API_KEYS_FILE)"
            )
        }
        logger.info("starting StoreGate", metadata: configuration.summary)
        let app = buildApplication(configuration: configuration, opened: opened, logger: logger)
        do {
            try await runApplication(app, configuration: configuration, logger: logger, telemetry: telemetry)
        } catch let error as ConfigurationError {
            // PostgreSQL unreachable or not migratable within the start-up bound: one line.
            throw CLIError(error.description)
        }
    }
}

import Foundation
public import Logging
public import StoreGateAppStoreClient
public import StoreGateSync
public import StoreGateCore
public import StoreGateLedger
public import StoreGateLedgerSQLite
public import StoreGateOffers
public import StoreGateEvents

/// Everything `storegate serve` is configured with.
///
/// ``load(environment:)`` reads it from environment variables (`storegate serve` merges its
/// flags over them, so a flag wins over its variable); every value is checked there, and the
/// first bad one stops start-up with a ``ConfigurationError`` naming the setting. The
/// defaults start a working service on an embedded SQLite file in the current directory.
///
/// Secrets (API keys, ledger encryption keys, the shared secret, the Server API key) are read
/// from the environment or from files, never from flags, and never appear in a description.
public struct ServerConfiguration: Sendable {
    /// Where the ledger lives.
    public enum Database: Sendable, Hashable, CustomStringConvertible {
        /// An embedded SQLite file (WAL mode).
        case sqlite(path: String)
        /// A PostgreSQL database shared by several instances; the URL may hold a password.
        case postgres(url: String)

        /// The default: `./storegate.sqlite`.
        public static let `default` = Database.sqlite(path: "./storegate.sqlite")

        /// `sqlite:PATH`, or `postgres://user@host/database` with the password redacted.
        public var description: String {
            switch self {
            case .sqlite(let path): return "sqlite:\(path)"
            case .postgres(let url):
                guard var components = URLComponents(string: url) else { return "postgres://<redacted>" }
                if components.password != nil { components.password = "redacted" }
                return components.string ?? "postgres://<redacted>"
            }
        }
    }

    /// One app whose proofs are accepted.
    public struct App: Sendable, Hashable {
        /// The bundle id proofs must name.
        public var bundleId: String
        /// The App Store id of the app (`appAppleId`), required to accept production
        /// notifications and app transactions.
        public var appAppleId: Int64?
        /// The app versions (`CFBundleVersion`) a receipt may name; empty accepts any.
        public var appVersions: Set<String>

        /// Describes an accepted app.
        public init(bundleId: String, appAppleId: Int64? = nil, appVersions: Set<String> = []) {
            self.bundleId = bundleId
            self.appAppleId = appAppleId
            self.appVersions = appVersions
        }
    }

    /// The address to listen on (default `127.0.0.1`).
    public var host: String = "127.0.0.1"
    /// The port to listen on; 0 picks a free one (default 8080).
    public var port: Int = 8080
    /// The ledger's store (default `sqlite:./storegate.sqlite`).
    public var database: Database = .default
    /// The bearer keys and what each may call. Empty: every authenticated endpoint answers 401.
    public var apiKeys: APIKeyStore = APIKeyStore()
    /// The apps whose proofs are accepted. Empty: every proof is refused.
    public var apps: [App] = []
    /// The environments accepted (default production and sandbox).
    public var environments: Set<AppStoreEnvironment> = AppStoreEnvironment.defaultAccepted
    /// The trust directory the ``trustStore`` was loaded from, if any.
    public var trustDirectory: String?
    /// Apple roots and opt-in anchors (Apple's pinned roots only, by default).
    public var trustStore: TrustStore = TrustStore()
    /// Encryption of stored raw proofs; `nil` stores digests only.
    public var encryption: ProofEncryption?
    /// The app-specific shared secret `/verifyReceipt` checks `password` against.
    public var sharedSecret: SharedSecret?
    /// App Store Server API credentials (validated at start-up; see docs/configuration.md).
    public var serverAPICredentials: AppStoreServerAPICredentials?
    /// Where the App Store Server API is (`STOREGATE_APPSTORE_API_URL_PRODUCTION`,
    /// `STOREGATE_APPSTORE_API_URL_SANDBOX`, or a stand-in's `STOREGATE_APPSTORE_API_URL`):
    /// Apple's recommended domains by default. Answers are verified to Apple's root either way.
    public var appStoreEndpoints: AppStoreServerAPIEndpoints = .apple
    /// Whether the App Store sync runs when Server API credentials are configured
    /// (`STOREGATE_SYNC`, default on).
    public var syncEnabled = true
    /// How the sync recovers missed notifications.
    public var syncSettings = NotificationSyncSettings()
    /// The shortest time between two refreshes of one account (`STOREGATE_REFRESH_INTERVAL_SECONDS`, default 60 s).
    public var refreshInterval: Duration = .seconds(60)
    /// Whether an account is refreshed from Apple when a receipt or signed transaction first
    /// shows one of its families (`STOREGATE_REFRESH_ON_FIRST_SIGHT`, default on with the sync).
    public var refreshOnFirstSight = true
    /// How `CONSUMPTION_REQUEST` notifications are answered (`STOREGATE_CONSUMPTION`: off by
    /// default, `consented` once the app collected its customers' consent;
    /// `STOREGATE_CONSUMPTION_SAMPLE_CONTENT`; `STOREGATE_CONSUMPTION_REFUND_PREFERENCE`;
    /// `STOREGATE_CONSUMPTION_REFUND_POLICY`, rules choosing the preference per request).
    public var consumption = ConsumptionSettings()
    /// The largest request body accepted, in bytes (default 4 MiB).
    public var maxBodyBytes: Int = 4 << 20
    /// Size limits of the proofs themselves.
    public var limits: Limits = .default
    /// Product types and subscription groups for proofs that do not state them (receipts), and
    /// the app's entitlements (`STOREGATE_PRODUCTS_FILE`).
    public var catalog: ProductCatalog = ProductCatalog()
    /// The file the catalog was read from: read again on SIGHUP.
    public var productsFile: String?
    /// Apple's commission for estimated proceeds (`STOREGATE_COMMISSION`: `standard` 30 %,
    /// `small-business` 15 %, or a percentage, with per-product exceptions).
    public var commission: CommissionRates = .standard
    /// Exchange rates for analytics totals in one reporting currency (`STOREGATE_FX_RATES_FILE`);
    /// without them totals stay per currency.
    public var exchangeRates: ExchangeRates?
    /// How an account maps to the `appAccountToken` of its purchases.
    public var accountTokenPolicy: AppAccountTokenPolicy = .accountIDIsUUID
    /// What happens when an account presents a purchase another account owns
    /// (`STOREGATE_TRANSFER_POLICY`: `refuse`, the default, answers 409; `transfer` moves it).
    public var transferPolicy: TransferPolicy = .refuse
    /// SQLite's durability setting (default `normal`: survives the process being killed).
    public var sqliteSynchronous: SQLiteLedger.Options.Synchronous = .normal
    /// Accounts whose stored facts the SQLite ledger keeps between reads while the file is
    /// unchanged (`STOREGATE_SQLITE_CACHE_ACCOUNTS`, default 4,096; 0 turns the cache off).
    public var sqliteCachedAccounts: Int = 4096
    /// SQLite's page cache per connection in MiB (`STOREGATE_SQLITE_PAGE_CACHE_MB`, 1–4096,
    /// default 2: SQLite's own).
    public var sqlitePageCacheMB: Int = SQLiteLedger.Options.defaultPageCacheBytes >> 20
    /// MiB of the file each SQLite reader maps into memory (`STOREGATE_SQLITE_MMAP_MB`, default
    /// 0: pages are read with `pread`). Mapped pages a reader touched count in the RSS.
    public var sqliteMmapMB: Int = 0
    /// The PostgreSQL connection pool's size.
    public var postgresMaxConnections: Int = 20
    /// The longest a request waits for the database before it answers 503 `retryable`
    /// (PostgreSQL: every call; SQLite: another process's write lock). `/readyz` waits at most
    /// the smaller of this and one second.
    public var databaseTimeout: Duration = .seconds(2)
    /// The log level (default `info`).
    public var logLevel: Logger.Level = .info
    /// How long a graceful shutdown may take before the service stops anyway (default 30 s).
    public var shutdownGracePeriod: Duration = .seconds(30)
    /// Tell Apple each granted transaction is finished (`STOREGATE_FINISH_TRANSACTIONS`; needs the sync).
    public var finishTransactions = false
    /// Set the account's token at Apple on purchases recorded without one
    /// (`STOREGATE_ACCOUNT_LINKING`; default on when `STOREGATE_ACCOUNT_TOKEN_NAMESPACE` is set).
    public var accountLinking = false
    /// The In-App Purchase key `POST /v1/offers/sign` signs with (`STOREGATE_OFFER_*`, else the
    /// App Store Server API key); `nil` answers `offers_not_configured`.
    public var offerSigningKey: OfferSigningKey?
    /// Which customers a promotional offer is signed for (`STOREGATE_OFFER_ELIGIBILITY`).
    public var offerEligibility: OfferEligibilityPolicy = .any
    /// Where the ledger's events are sent (none by default: events are still recorded and
    /// readable with `GET /v1/events`).
    public var webhooks: [WebhookEndpoint] = []
    /// How webhook deliveries are attempted and retried.
    public var webhookPolicy = WebhookDeliveryPolicy()
    /// Which receiver addresses webhooks may reach: public ones only, unless
    /// `STOREGATE_WEBHOOK_ALLOW_PRIVATE=1` allows loopback, private and link-local ones too
    /// (checked when an endpoint is created or changed, and before every round of deliveries).
    public var webhookAddressPolicy = WebhookAddressPolicy()
    /// The request rate limit of every key that has none of its own
    /// (`STOREGATE_API_KEY_RATE_LIMIT`, `requests/seconds`); `nil` (the default): unlimited.
    public var apiKeyRateLimit: APIKeyRateLimit?
    /// How often a key's last use is written to the ledger, at most, per key and instance (60 s).
    public var apiKeyUsageInterval: Duration = .seconds(60)
    /// How long an instance trusts what it read of a ledger-stored API key (1 s): a key
    /// revoked on one instance is refused by every other within this time.
    public var apiKeyCacheInterval: Duration = .seconds(1)
    /// How often the subscription clock appends the state changes time alone made (a period
    /// or grace period ending) to the event stream (``SubscriptionClockService``; 15 s).
    public var clockInterval: Duration = .seconds(15)
    /// How long events are kept after they were recorded (`STOREGATE_EVENTS_RETENTION_DAYS`,
    /// at least 7 days: webhooks retry for 3); `nil` (the default) keeps every event. Deleted
    /// events leave the stream, the webhook history and the console's timelines.
    public var eventsRetention: Duration?
    /// How long a console session lasts after sign-in (`STOREGATE_CONSOLE_SESSION_MINUTES`).
    public var consoleSessionLifetime: Duration = .seconds(8 * 3600)
    /// Console cookies always `Secure` (`STOREGATE_CONSOLE_SECURE_COOKIES=true`); otherwise
    /// only when the request came through a TLS terminator (`X-Forwarded-Proto: https`).
    public var consoleSecureCookies = false
    /// Whether traces are exported over OTLP: `OTEL_EXPORTER_OTLP_ENDPOINT` (or
    /// `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set, `OTEL_SDK_DISABLED` is not `true` and
    /// `OTEL_TRACES_EXPORTER` is not `none`. Off, no tracer is bootstrapped and requests get
    /// no tracing middleware (docs/tracing.md).
    public var exportsTraces = false

    /// The default configuration: a working service on `./storegate.sqlite`, no keys, no apps.
    public init() {}

    /// Whether the App Store sync runs: credentials configured and `STOREGATE_SYNC` not off.
    public var isSyncConfigured: Bool { syncEnabled && serverAPICredentials != nil }

    /// The accepted app for `bundleId`, if any.
    public func app(_ bundleId: String) -> App? {
        apps.first { $0.bundleId == bundleId }
    }

    /// What the service logs at start-up: every setting, secrets shown only as present.
    public var summary: Logger.Metadata {
        [
            "host": "\(host)",
            "port": "\(port)",
            "database": "\(database)",
            "api_keys": "\(apiKeys.names.joined(separator: ","))",
            "bundle_ids": "\(apps.map(\.bundleId).joined(separator: ","))",
            "environments": "\(environments.map(\.rawValue).sorted().joined(separator: ","))",
            "trust_dir": "\(trustDirectory ?? "-")",
            "opt_in_anchors": "\(trustStore.optInAnchors.count)",
            "ledger_encryption": "\(encryption.map { "keys \($0.keyIDs.joined(separator: ","))" } ?? "off")",
            "shared_secret": "\(sharedSecret == nil ? "absent" : "present")",
            "server_api_credentials": "\(serverAPICredentials == nil ? "absent" : "present")",
            "appstore_sync": "\(isSyncConfigured ? "every \(syncSettings.interval.components.seconds) s" : "off")",
            "consumption_requests": isSyncConfigured && consumption.customerConsented ? "answered" : "off",
            "consumption_refund_policy": "\(consumption.refundPolicy.map { "\($0.rules.count) rule(s)" } ?? "none")",
            "max_body_bytes": "\(maxBodyBytes)",
            "transfer_policy": "\(transferPolicy)",
            "webhook_private_addresses": webhookAddressPolicy.allowsPrivateAddresses ? "allowed" : "refused",
            "api_key_rate_limit": "\(apiKeyRateLimit.map(\.description) ?? "off")",
            "traces": exportsTraces ? "otlp" : "off",
        ]
    }
}

extension ServerConfiguration {
    /// Every setting: its environment variable (the raw value) and the flag mirroring it.
    public enum Setting: String, CaseIterable, Sendable {
        case host = "STOREGATE_HOST"
        case port = "STOREGATE_PORT"
        case database = "STOREGATE_DATABASE"
        case apiKeys = "STOREGATE_API_KEYS"
        case apiKeysFile = "STOREGATE_API_KEYS_FILE"
        case bundleIds = "STOREGATE_BUNDLE_IDS"
        case appVersions = "STOREGATE_APP_VERSIONS"
        case appAppleIds = "STOREGATE_APP_APPLE_IDS"
        case environments = "STOREGATE_ENVIRONMENTS"
        case trustDirectory = "STOREGATE_TRUST_DIR"
        case ledgerKeys = "STOREGATE_LEDGER_KEYS"
        case ledgerKeysFile = "STOREGATE_LEDGER_KEYS_FILE"
        case sharedSecret = "STOREGATE_SHARED_SECRET"
        case sharedSecretFile = "STOREGATE_SHARED_SECRET_FILE"
        case appStoreKeyId = "STOREGATE_APPSTORE_KEY_ID"
        case appStoreIssuerId = "STOREGATE_APPSTORE_ISSUER_ID"
        case appStorePrivateKeyFile = "STOREGATE_APPSTORE_PRIVATE_KEY_FILE"
        case maxBodyBytes = "STOREGATE_MAX_BODY_BYTES"
        case productsFile = "STOREGATE_PRODUCTS_FILE"
        case accountTokenNamespace = "STOREGATE_ACCOUNT_TOKEN_NAMESPACE"
        case transferPolicy = "STOREGATE_TRANSFER_POLICY"
        case sqliteSynchronous = "STOREGATE_SQLITE_SYNCHRONOUS"
        case sqliteCacheAccounts = "STOREGATE_SQLITE_CACHE_ACCOUNTS"
        case sqlitePageCache = "STOREGATE_SQLITE_PAGE_CACHE_MB"
        case sqliteMmap = "STOREGATE_SQLITE_MMAP_MB"
        case postgresMaxConnections = "STOREGATE_POSTGRES_MAX_CONNECTIONS"
        case databaseTimeout = "STOREGATE_DATABASE_TIMEOUT_MS"
        case logLevel = "STOREGATE_LOG_LEVEL"
        case shutdownGrace = "STOREGATE_SHUTDOWN_GRACE_SECONDS"
        case webhooksFile = "STOREGATE_WEBHOOKS_FILE"
        case webhookAllowPrivate = "STOREGATE_WEBHOOK_ALLOW_PRIVATE"
        case apiKeyRateLimit = "STOREGATE_API_KEY_RATE_LIMIT"
        case eventsRetentionDays = "STOREGATE_EVENTS_RETENTION_DAYS"
        case consoleSessionMinutes = "STOREGATE_CONSOLE_SESSION_MINUTES"
        case consoleSecureCookies = "STOREGATE_CONSOLE_SECURE_COOKIES"
        case appStoreAPIURL = "STOREGATE_APPSTORE_API_URL"
        case appStoreAPIURLProduction = "STOREGATE_APPSTORE_API_URL_PRODUCTION"
        case appStoreAPIURLSandbox = "STOREGATE_APPSTORE_API_URL_SANDBOX"
        case sync = "STOREGATE_SYNC"
        case syncInterval = "STOREGATE_SYNC_INTERVAL_SECONDS"
        case syncLookBack = "STOREGATE_SYNC_LOOKBACK_SECONDS"
        case syncStart = "STOREGATE_SYNC_START"
        case refreshInterval = "STOREGATE_REFRESH_INTERVAL_SECONDS"
        case refreshOnFirstSight = "STOREGATE_REFRESH_ON_FIRST_SIGHT"
        case consumption = "STOREGATE_CONSUMPTION"
        case consumptionSampleContent = "STOREGATE_CONSUMPTION_SAMPLE_CONTENT"
        case consumptionRefundPreference = "STOREGATE_CONSUMPTION_REFUND_PREFERENCE"
        case commission = "STOREGATE_COMMISSION"
        case fxRatesFile = "STOREGATE_FX_RATES_FILE"
        case consumptionRefundPolicy = "STOREGATE_CONSUMPTION_REFUND_POLICY"
        case finishTransactions = "STOREGATE_FINISH_TRANSACTIONS"
        case accountLinking = "STOREGATE_ACCOUNT_LINKING"
        case offerKeyId = "STOREGATE_OFFER_KEY_ID"
        case offerPrivateKey = "STOREGATE_OFFER_PRIVATE_KEY"
        case offerPrivateKeyFile = "STOREGATE_OFFER_PRIVATE_KEY_FILE"
        case offerEligibility = "STOREGATE_OFFER_ELIGIBILITY"

        /// The `storegate serve` flag mirroring the variable; `nil` for secrets given inline,
        /// which a command line would show to every user of the machine.
        public var flag: String? {
            switch self {
            case .apiKeys, .ledgerKeys, .sharedSecret, .offerPrivateKey: return nil
            default:
                return "--" + rawValue.dropFirst("STOREGATE_".count).lowercased().replacingOccurrences(of: "_", with: "-")
            }
        }
    }
}

extension ServerConfiguration {
    /// What the service warns about at start-up: settings that work but refuse or weaken
    /// something the operator may not expect.
    public var startupWarnings: [String] {
        var warnings: [String] = []
        if apps.isEmpty {
            warnings.append("no bundle id is configured: every proof will be refused (set STOREGATE_BUNDLE_IDS)")
        }
        if !trustStore.optInAnchors.isEmpty {
            warnings.append("\(trustStore.optInAnchors.count) opt-in trust anchor(s) from \(trustDirectory ?? "the trust directory") are enabled: proofs they sign report the Xcode or Test environment")
        }
        let nonApple = environments.subtracting([.production, .sandbox])
        if !nonApple.isEmpty {
            warnings.append("environments \(nonApple.map(\.rawValue).sorted().joined(separator: ", ")) are accepted: proofs not signed by Apple can be recorded")
        }
        if host != "127.0.0.1", host != "localhost", host != "::1" {
            warnings.append("listening on \(host): serve StoreGate behind TLS (it speaks plain HTTP)")
        }
        for endpoint in webhooks where endpoint.sendsInClearOffHost {
            warnings.append("webhook endpoint '\(endpoint.name)' is plain http to another host: its events (accounts, purchases) cross the network unencrypted")
        }
        for endpoint in webhooks {
            warnings += endpoint.secretWarnings
        }
        if webhookAddressPolicy.allowsPrivateAddresses {
            warnings.append("STOREGATE_WEBHOOK_ALLOW_PRIVATE is on: webhook endpoints may reach loopback, private and link-local addresses (this host, its network, cloud metadata)")
        }
        return warnings
    }
}

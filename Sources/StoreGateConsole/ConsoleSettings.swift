public import StoreGateCore
public import StoreGateLedger
public import StoreGateWorkers

/// What the console's pages show of the service's configuration, and how its sessions behave.
public struct ConsoleSettings: Sendable {
    /// How long a session lasts.
    public var sessionLifetime: Duration
    /// Whether session cookies are always `Secure` (else only behind `X-Forwarded-Proto: https`).
    public var secureCookies: Bool
    /// The accepted Apple environments.
    public var environments: Set<AppStoreEnvironment>
    /// The accepted apps' bundle ids.
    public var bundleIds: [String]
    /// The configuration's and the ledger's start-up warnings.
    public var startupWarnings: [String]
    /// How often missed notifications are recovered; `nil` when the sync is off.
    public var syncInterval: Duration?
    /// Whether refund-time consumption requests are answered.
    public var answersConsumption: Bool
    /// The ledger's backend, as the footer names it.
    public var backend: String
    /// Whether the ledger keeps raw proofs (an encryption key is configured).
    public var isEncryptionConfigured: Bool

    /// Settings from their parts.
    public init(
        sessionLifetime: Duration, secureCookies: Bool, environments: Set<AppStoreEnvironment>, bundleIds: [String], startupWarnings: [String],
        syncInterval: Duration?, answersConsumption: Bool, backend: String, isEncryptionConfigured: Bool
    ) {
        self.sessionLifetime = sessionLifetime
        self.secureCookies = secureCookies
        self.environments = environments
        self.bundleIds = bundleIds
        self.startupWarnings = startupWarnings
        self.syncInterval = syncInterval
        self.answersConsumption = answersConsumption
        self.backend = backend
        self.isEncryptionConfigured = isEncryptionConfigured
    }
}

/// What an API key may do in the console.
public struct ConsolePermissions: OptionSet, Sendable, Hashable {
    /// The bits.
    public let rawValue: Int

    /// Permissions from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// Sign in (the `console` permission).
    public static let signIn = ConsolePermissions(rawValue: 1 << 0)
    /// Grant and revoke entitlements (`grants.manage`).
    public static let manageGrants = ConsolePermissions(rawValue: 1 << 1)
    /// Move purchases between accounts (`transfers.manage`).
    public static let manageTransfers = ConsolePermissions(rawValue: 1 << 2)
    /// Add, pause and rotate webhook endpoints (`webhooks.manage`).
    public static let manageWebhooks = ConsolePermissions(rawValue: 1 << 3)
}

/// The service's readiness as the system page shows it.
public struct ConsoleReadiness: Sendable {
    /// Whether the service is ready (database and trust anchors).
    public var isReady: Bool
    /// The database's failure, when it failed the check.
    public var databaseError: LedgerError?
    /// The background workers' states.
    public var workers: [WorkerStatus]

    /// A readiness from its parts.
    public init(isReady: Bool, databaseError: LedgerError?, workers: [WorkerStatus]) {
        self.isReady = isReady
        self.databaseError = databaseError
        self.workers = workers
    }
}

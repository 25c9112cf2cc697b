import Foundation
import Logging
import ServiceLifecycle
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateLedger
import StoreGateSync
import StoreGateWorkers

/// The App Store sync of the service: the notification history syncs, run in the
/// application's service group (it closes their HTTP client when it stops; added after
/// ``LedgerService``, so it stops before the ledger closes), and the account refresher the
/// refresh endpoint calls, sharing the same clients.
struct SyncRunner: Service {
    let service: AppStoreSyncService
    /// What the endpoints use: the refresher and the clients (the test-notification check).
    let access: AppStoreAccess
    /// Refreshes an account when a receipt or signed transaction first shows one of its families.
    let firstSight: FirstSightRefresh?
    /// Finishes granted transactions and links accounts at Apple (when either is on).
    let transactionActions: TransactionActions?
    let transport: AsyncHTTPClientTransport
    /// Every worker of the sync, behind the application's start gate.
    let workers: WorkerGroup

    /// The sync of the configured credentials: one client per accepted Apple environment
    /// (production, sandbox); its workers wait at `gate`. `nil` without credentials or with
    /// `STOREGATE_SYNC=off`.
    init?(
        configuration: ServerConfiguration, verification: ProofVerification, ledger: any Ledger, gate: StartGate, registry: WorkerRegistry,
        metrics: ServerMetrics, logger: Logger, now: @escaping @Sendable () -> Date
    ) {
        guard configuration.isSyncConfigured, let credentials = configuration.serverAPICredentials else { return nil }
        var syncLogger = logger
        syncLogger[metadataKey: "component"] = "appstore-sync"
        let transport = AsyncHTTPClientTransport(logger: syncLogger)
        let tokens = AppStoreServerAPITokenProvider(credentials: credentials)
        let holder = "storegate-\(UUID().uuidString.lowercased())"
        var clients: [AppStoreServerAPIClient] = []
        for environment in [AppStoreEnvironment.production, .sandbox] where configuration.environments.contains(environment) {
            guard let verifier = verification.payloadVerifier(bundleId: credentials.bundleId, environment: environment),
                  let client = try? AppStoreServerAPIClient(
                      tokens: tokens, environment: environment, endpoints: configuration.appStoreEndpoints, transport: transport,
                      verifier: verifier, logger: syncLogger, now: now
                  )
            else { continue }
            clients.append(client)
        }
        let consumption = configuration.consumption.customerConsented
            ? ConsumptionResponder(
                clients: clients, ledger: ledger, settings: configuration.consumption, holder: holder, metrics: metrics.instrumentFactory,
                logger: syncLogger, now: now
            )
            : nil
        let syncs = clients.map { client in
            NotificationHistorySync(
                client: client, ledger: ledger, settings: configuration.syncSettings, holder: holder, consumption: consumption,
                metrics: metrics.instrumentFactory, logger: syncLogger, now: now
            )
        }
        self.transport = transport
        self.service = AppStoreSyncService(syncs: syncs, interval: configuration.syncSettings.interval, logger: syncLogger)
        let refresher = AccountRefresher(
            clients: clients, ledger: ledger, minimumInterval: configuration.refreshInterval, metrics: metrics.instrumentFactory,
            logger: syncLogger, now: now
        )
        self.access = AppStoreAccess(refresher: refresher, clients: clients, holder: holder, consumption: consumption)
        let firstSight = configuration.refreshOnFirstSight
            ? FirstSightRefresh(refresher: refresher, ledger: ledger, holder: holder, logger: syncLogger, now: now)
            : nil
        self.firstSight = firstSight
        let actionSettings = TransactionActions.Settings(
            finishTransactions: configuration.finishTransactions, linkAccounts: configuration.accountLinking, accountTokenPolicy: configuration.accountTokenPolicy
        )
        let transactionActions = actionSettings.isActive
            ? TransactionActions(clients: clients, ledger: ledger, settings: actionSettings, holder: holder, metrics: metrics.instrumentFactory, logger: syncLogger, now: now)
            : nil
        self.transactionActions = transactionActions
        var workers = service.workers
        if let firstSight { workers.append(firstSight) }
        if let transactionActions { workers.append(transactionActions) }
        if let consumption { workers.append(consumption) }
        self.workers = WorkerGroup(workers, gate: gate, registry: registry, logger: syncLogger, metrics: metrics.instrumentFactory)
    }

    func run() async throws {
        try await workers.run()
        try await transport.shutdown()
    }
}

/// The App Store Server API as the endpoints see it.
struct AppStoreAccess: Sendable {
    /// Refreshes one account.
    let refresher: AccountRefresher
    /// One client per accepted Apple environment.
    let clients: [AppStoreServerAPIClient]
    /// This instance's name in leases.
    let holder: String
    /// Answers `CONSUMPTION_REQUEST` notifications (the webhook queues them here); `nil`
    /// unless `STOREGATE_CONSUMPTION=consented`.
    let consumption: ConsumptionResponder?

    /// The client of `environment`, if it is accepted.
    func client(_ environment: AppStoreEnvironment) -> AppStoreServerAPIClient? {
        clients.first { $0.environment == environment }
    }

    /// The client that answers for `environment`'s transactions: its own, or for an opt-in
    /// anchor's proofs (Test, Xcode) the sandbox's, as the stand-in answers.
    func serving(_ environment: AppStoreEnvironment) -> AppStoreServerAPIClient? {
        client(environment) ?? (environment == .test || environment == .xcode ? client(.sandbox) : nil)
    }
}

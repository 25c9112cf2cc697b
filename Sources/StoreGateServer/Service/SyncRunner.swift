import Foundation
import Logging
import ServiceLifecycle
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateLedger
import StoreGateSync

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
    let transport: AsyncHTTPClientTransport

    /// The sync of the configured credentials: one client per accepted Apple environment
    /// (production, sandbox). `nil` without credentials, with `STOREGATE_SYNC=off`, or when
    /// the ledger keeps no leased states.
    init?(
        configuration: ServerConfiguration, verification: ProofVerification, ledger: any Ledger, metrics: ServerMetrics, logger: Logger,
        now: @escaping @Sendable () -> Date
    ) {
        guard configuration.isSyncConfigured, let credentials = configuration.serverAPICredentials,
              let store = ledger as? any Ledger & LeasedStateStore
        else { return nil }
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
                clients: clients, ledger: store, settings: configuration.consumption, holder: holder, metrics: metrics.instrumentFactory,
                logger: syncLogger, now: now
            )
            : nil
        let syncs = clients.map { client in
            NotificationHistorySync(
                client: client, ledger: store, settings: configuration.syncSettings, holder: holder, consumption: consumption,
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
        self.firstSight = configuration.refreshOnFirstSight
            ? FirstSightRefresh(refresher: refresher, ledger: store, holder: holder, logger: syncLogger, now: now)
            : nil
    }

    func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await service.run() }
            if let firstSight {
                group.addTask { try await firstSight.run() }
            }
            if let consumption = access.consumption {
                group.addTask { try await consumption.run() }
            }
            try await group.waitForAll()
        }
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
}

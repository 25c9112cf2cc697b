import Foundation
import Logging
import ServiceLifecycle
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateLedger
import StoreGateSync

/// Runs the App Store sync in the application's service group, and closes its HTTP client
/// when it stops. Added after ``LedgerService``, so it stops before the ledger closes.
struct SyncRunner: Service {
    let service: AppStoreSyncService
    let transport: AsyncHTTPClientTransport

    /// The runner for the configured credentials: one sync per accepted Apple environment
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
        var syncs: [NotificationHistorySync] = []
        for environment in [AppStoreEnvironment.production, .sandbox] where configuration.environments.contains(environment) {
            guard let verifier = verification.payloadVerifier(bundleId: credentials.bundleId, environment: environment),
                  let client = try? AppStoreServerAPIClient(
                      tokens: tokens, environment: environment, endpoints: configuration.appStoreEndpoints, transport: transport,
                      verifier: verifier, logger: syncLogger, now: now
                  )
            else { continue }
            syncs.append(NotificationHistorySync(
                client: client, ledger: store, settings: configuration.syncSettings, holder: holder, metrics: metrics.instrumentFactory,
                logger: syncLogger, now: now
            ))
        }
        self.transport = transport
        self.service = AppStoreSyncService(syncs: syncs, interval: configuration.syncSettings.interval, logger: syncLogger)
    }

    func run() async throws {
        try await service.run()
        try await transport.shutdown()
    }
}

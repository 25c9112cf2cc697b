import Foundation
import Logging
import StoreGateConsole
import StoreGateCore
import StoreGateEvents
import StoreGateLedger
import StoreGateSync

/// The console's read model over the service: the ledger's reads and the few actions the
/// pages take, the configuration they show, the verifier and the readiness check. The console
/// sees nothing else of the service.
struct ServiceConsoleModel: ConsoleReadModel {
    let endpoints: Endpoints
    let settings: ConsoleSettings

    init(_ endpoints: Endpoints) {
        self.endpoints = endpoints
        let configuration = endpoints.configuration
        self.settings = ConsoleSettings(
            sessionLifetime: configuration.consoleSessionLifetime, secureCookies: configuration.consoleSecureCookies,
            environments: configuration.environments, bundleIds: configuration.apps.map(\.bundleId),
            startupWarnings: configuration.startupWarnings + endpoints.ledger.startupWarnings,
            syncInterval: configuration.isSyncConfigured ? configuration.syncSettings.interval : nil,
            answersConsumption: endpoints.appStore?.consumption != nil, backend: endpoints.ledger.backend,
            isEncryptionConfigured: endpoints.ledger.isEncryptionConfigured
        )
    }

    private var ledger: any Ledger { endpoints.ledger }

    func now() -> Date { endpoints.now() }

    func consoleKeyName(presented: String) -> String? {
        guard let key = endpoints.configuration.apiKeys.match(presented), key.permissions.contains(.console) else { return nil }
        return key.name
    }

    func permissions(ofKeyNamed name: String) -> ConsolePermissions {
        let granted = endpoints.configuration.apiKeys.permissions(ofKeyNamed: name)
        var permissions: ConsolePermissions = []
        for (permission, console) in [(Permission.console, ConsolePermissions.signIn), (.grantsManage, .manageGrants),
                                      (.transfersManage, .manageTransfers), (.webhooksManage, .manageWebhooks)]
        where granted.contains(permission) {
            permissions.insert(console)
        }
        return permissions
    }

    func entitlements(for account: AccountID, at date: Date) async throws(LedgerError) -> Entitlements {
        try await ledger.entitlements(for: account, at: date)
    }

    func grants(for account: AccountID) async throws(LedgerError) -> [EntitlementGrant] { try await ledger.grants(for: account) }

    func timeline(for account: AccountID, before sequence: Int64?, limit: Int) async throws(LedgerError) -> [LedgerEvent] {
        try await ledger.timeline(for: account, before: sequence, limit: limit)
    }

    func search(_ term: String, limit: Int) async throws(LedgerError) -> [RecordedTransaction] { try await ledger.search(term, limit: limit) }

    func transaction(_ transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> RecordedTransaction? {
        try await ledger.transaction(transactionId, in: environment)
    }

    func storedProof(_ digest: ProofDigest) async throws(LedgerError) -> [UInt8]? { try await ledger.storedProof(digest) }

    func catalog() -> ProductCatalog { endpoints.catalog.current }

    func inspect(_ proof: String) async -> ProofInspection { await endpoints.verification.inspect(proof) }

    func series(_ query: AnalyticsQuery, today: AnalyticsDay) async throws(LedgerError) -> AnalyticsSeries {
        try await ledger.series(query, today: today, commission: endpoints.configuration.commission)
    }

    func activity(days: Int, endingAt date: Date) async throws(LedgerError) -> [DailyActivity] { try await ledger.activity(days: days, endingAt: date) }

    func analyticsDrillDown(_ point: AnalyticsPointQuery, limit: Int) async throws(LedgerError) -> AnalyticsDrillDown {
        try await ledger.analyticsDrillDown(point, limit: limit)
    }

    func readiness(logger: Logger) async -> ConsoleReadiness {
        let readiness = await endpoints.readiness(logger: logger)
        return ConsoleReadiness(isReady: readiness.isReady, databaseError: readiness.databaseError, workers: readiness.workers)
    }

    var trustStore: TrustStore { endpoints.verification.chainVerifier.trustStore }

    func webhookEndpoints() async throws(LedgerError) -> [StoredWebhookEndpoint] { try await ledger.webhookEndpoints() }

    func deliveryCounts() async throws(LedgerError) -> [String: [EventDelivery.Status: Int]] { try await ledger.deliveryCounts() }

    func webhookEndpointStates() async throws(LedgerError) -> [String: WebhookEndpointState] { try await WebhookEndpointState.all(in: ledger) }

    func syncStatuses(at date: Date) async throws(LedgerError) -> [NotificationSyncStatus] {
        try await AppStoreSyncService.statuses(of: ledger, at: date)
    }

    func consumptionSummary() async throws(LedgerError) -> ConsumptionResponder.Summary { try await ConsumptionResponder.summary(of: ledger) }

    func grant(_ request: GrantRequest) async throws(LedgerError) -> GrantOutcome { try await ledger.grant(request) }

    func revokeGrant(_ id: String, of account: AccountID, by actor: String, reason: String, at date: Date) async throws(LedgerError) -> EntitlementGrant {
        try await ledger.revokeGrant(id, of: account, by: actor, reason: reason, at: date)
    }

    func transfer(_ request: TransferRequest) async throws(LedgerError) -> TransferOutcome { try await ledger.transfer(request) }

    func createWebhookEndpoint(_ endpoint: StoredWebhookEndpoint) async throws(LedgerError) -> Bool { try await ledger.createWebhookEndpoint(endpoint) }

    func updateWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, expectedRevision: Int64) async throws(LedgerError) -> Bool {
        try await ledger.updateWebhookEndpoint(endpoint, expectedRevision: expectedRevision)
    }

    func checkWebhookURL(_ url: String) async throws(ConsoleError) {
        do throws(APIError) {
            try await endpoints.checkWebhookURL(url)
        } catch {
            throw ConsoleError(.webhookAddressRefused, status: error.status, reason: "\(error.code): \(error.message)")
        }
    }
}

public import Foundation
public import Logging
public import StoreGateCore
public import StoreGateEvents
public import StoreGateLedger
public import StoreGateSync
import StoreGateWorkers

/// What the console reads and the few things it does, and nothing else of the service: the
/// console's one seam. The service implements it over its ledger, configuration, verifiers and
/// workers; the console never sees those.
///
/// Reads and actions throw the ledger's typed error; the console shows a failure as a failure.
public protocol ConsoleReadModel: Sendable {
    /// The clock (subscription states, grant starts, "now" on the pages).
    func now() -> Date
    /// What the pages show of the service's configuration.
    var settings: ConsoleSettings { get }

    // MARK: Keys

    /// The name of the API key `presented` is, when it is one with the console permission.
    func consoleKeyName(presented: String) -> String?
    /// What the key named `name` may do (nothing when no such key is configured any more).
    func permissions(ofKeyNamed name: String) -> ConsolePermissions

    // MARK: Accounts and transactions

    /// An account's entitlements at `date`.
    func entitlements(for account: AccountID, at date: Date) async throws(LedgerError) -> Entitlements
    /// An account's grants.
    func grants(for account: AccountID) async throws(LedgerError) -> [EntitlementGrant]
    /// An account's timeline, newest first, before `sequence`.
    func timeline(for account: AccountID, before sequence: Int64?, limit: Int) async throws(LedgerError) -> [LedgerEvent]
    /// Transactions matching a search term, newest first.
    func search(_ term: String, limit: Int) async throws(LedgerError) -> [RecordedTransaction]
    /// One recorded transaction.
    func transaction(_ transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> RecordedTransaction?
    /// A stored raw proof, decrypted.
    func storedProof(_ digest: ProofDigest) async throws(LedgerError) -> [UInt8]?
    /// The catalog entitlements are derived with.
    func catalog() -> ProductCatalog
    /// Verifies a pasted proof, step by step (nothing recorded).
    func inspect(_ proof: String) async -> ProofInspection

    // MARK: Analytics

    /// One metric's series (the configured commission applied).
    func series(_ query: AnalyticsQuery, today: AnalyticsDay) async throws(LedgerError) -> AnalyticsSeries
    /// The ledger's daily activity counts.
    func activity(days: Int, endingAt date: Date) async throws(LedgerError) -> [DailyActivity]
    /// The transactions behind one point of a chart.
    func analyticsDrillDown(_ point: AnalyticsPointQuery, limit: Int) async throws(LedgerError) -> AnalyticsDrillDown

    // MARK: The system page

    /// Whether the service is ready, and its workers' states.
    func readiness(logger: Logger) async -> ConsoleReadiness
    /// The trust anchors proofs are verified against.
    var trustStore: TrustStore { get }
    /// The stored webhook endpoints.
    func webhookEndpoints() async throws(LedgerError) -> [StoredWebhookEndpoint]
    /// Deliveries per endpoint and status.
    func deliveryCounts() async throws(LedgerError) -> [String: [EventDelivery.Status: Int]]
    /// Each endpoint's delivery state (disabled after a 410).
    func webhookEndpointStates() async throws(LedgerError) -> [String: WebhookEndpointState]
    /// The App Store sync's state per app and environment.
    func syncStatuses(at date: Date) async throws(LedgerError) -> [NotificationSyncStatus]
    /// The consumption requests' counts and last error.
    func consumptionSummary() async throws(LedgerError) -> ConsumptionResponder.Summary

    // MARK: Actions

    /// Grants an entitlement.
    func grant(_ request: GrantRequest) async throws(LedgerError) -> GrantOutcome
    /// Revokes a grant.
    func revokeGrant(_ id: String, of account: AccountID, by actor: String, reason: String, at date: Date) async throws(LedgerError) -> EntitlementGrant
    /// Moves a purchase family to an account.
    func transfer(_ request: TransferRequest) async throws(LedgerError) -> TransferOutcome
    /// Stores a new webhook endpoint: `false` when one has its name.
    func createWebhookEndpoint(_ endpoint: StoredWebhookEndpoint) async throws(LedgerError) -> Bool
    /// Stores a changed endpoint if its revision is still `expectedRevision`.
    func updateWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, expectedRevision: Int64) async throws(LedgerError) -> Bool
    /// Checks a webhook URL against the service's address policy.
    ///
    /// - Throws: ``ConsoleError`` with the code `webhookAddressRefused`, its status and reason.
    func checkWebhookURL(_ url: String) async throws(ConsoleError)
}

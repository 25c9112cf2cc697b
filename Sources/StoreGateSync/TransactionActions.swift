public import Foundation
public import Logging
public import Metrics
public import StoreGateAppStoreClient
import StoreGateCore
public import StoreGateLedger
public import StoreGateWorkers

/// What the ledger tells Apple about the transactions it records, because it knows best:
///
/// - **Finish Transaction** (`STOREGATE_FINISH_TRANSACTIONS=on`): once a transaction is
///   recorded and granted — its gain event (`purchase.recorded`, `subscription.renewed`,
///   `consumable.credited`) is in the outbox and it is not revoked — StoreGate tells Apple the
///   purchase was delivered (a server that manages entitlements may finish for the app).
/// - **Account linking** (`STOREGATE_ACCOUNT_LINKING=on`): when a purchase recorded to an
///   account carries no `appAccountToken` and the token policy gives the account one, StoreGate
///   sets it on Apple's side (Set App Account Token), so later notifications and history name
///   the account.
///
/// It follows the ledger's outbox from a leased place (one instance at a time, a restart
/// continues where it stopped, the place is saved after every call), so each transaction is
/// acted on once. When Apple is unavailable or answers 429 the same event is tried again after
/// `Retry-After` (or 30 s), and so is a refused token (credentials to fix, not transactions to
/// skip); an answer Apple refuses for good (an unknown transaction, a
/// transaction of another app) is counted and logged, and the worker moves on. A crash between
/// Apple's answer and the saved place repeats that one call; both calls are idempotent at Apple.
public struct TransactionActions: PeriodicWorker {
    /// The name of its place among the ledger's leased states.
    public static let stateName = "sync/transaction-actions"

    /// Its place and its counts (`GET /v1/sync/status`).
    public struct Progress: Codable, Sendable, Hashable {
        /// The sequence of the last event handled.
        public var sequence: Int64
        /// Transactions Apple confirmed finished.
        public var finished: Int64 = 0
        /// Purchases whose token Apple set.
        public var linked: Int64 = 0
        /// Calls Apple refused for good.
        public var failed: Int64 = 0
        /// The last refusal or failure: `code: reason` (never a token).
        public var lastError: String?
        /// The transaction of the last refusal or failure.
        public var lastErrorTransactionId: String?
        /// When the last call succeeded.
        public var lastActionAt: Date?

        /// A place at `sequence` with nothing counted.
        public init(sequence: Int64) {
            self.sequence = sequence
        }
    }

    /// Which actions run.
    public struct Settings: Sendable, Hashable {
        /// Call Finish Transaction for every granted transaction.
        public var finishTransactions: Bool
        /// Set the account's token on purchases recorded without one.
        public var linkAccounts: Bool
        /// The account's token.
        public var accountTokenPolicy: AppAccountTokenPolicy

        /// Creates the settings.
        public init(finishTransactions: Bool, linkAccounts: Bool, accountTokenPolicy: AppAccountTokenPolicy) {
            self.finishTransactions = finishTransactions
            self.linkAccounts = linkAccounts
            self.accountTokenPolicy = accountTokenPolicy
        }

        /// Whether any action runs.
        public var isActive: Bool { finishTransactions || linkAccounts }
    }

    static let place = LeasedValue<Progress>(stateName)

    private let clients: [AppStoreEnvironment: AppStoreServerAPIClient]
    private let ledger: any Ledger
    private let settings: Settings
    private let outbox: OutboxPlace<Progress>
    private let metrics: any MetricsFactory
    private let logger: Logger
    private let now: @Sendable () -> Date
    public let schedule: WorkerSchedule

    public var workerName: String { "transaction_actions" }

    /// Creates the worker.
    ///
    /// - Parameters:
    ///   - clients: One client per accepted Apple environment.
    ///   - ledger: The outbox read, the transactions looked up and the place kept.
    ///   - settings: Which actions run.
    ///   - holder: This instance's name in leases.
    ///   - pollInterval: The wait when the outbox has nothing new (default 1 s).
    ///   - lease: How long a killed instance holds the stream (default 2 minutes).
    ///   - metrics: Where `storegate_sync_transaction_actions_total{action,outcome}` is counted.
    ///   - logger: The worker's logger.
    ///   - now: The clock.
    public init(
        clients: [AppStoreServerAPIClient], ledger: any Ledger, settings: Settings, holder: String, pollInterval: Duration = .seconds(1),
        lease: Duration = .seconds(120), metrics: any MetricsFactory, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.clients = Dictionary(clients.map { ($0.environment, $0) }, uniquingKeysWith: { first, _ in first })
        self.ledger = ledger
        self.settings = settings
        self.outbox = OutboxPlace(state: Self.place, ledger: ledger, holder: holder, lease: lease, now: now) { Progress(sequence: $0) }
        self.metrics = metrics
        self.logger = logger
        self.now = now
        self.schedule = WorkerSchedule(interval: pollInterval, backoff: Backoff(first: .seconds(5), maximum: .seconds(60)))
    }

    /// Sets its place at the end of the stream when it has none (a new deployment does not act
    /// on history); run before the service accepts requests.
    public func initializePlace() async throws(LedgerError) {
        try await outbox.initialize()
    }

    /// The stored progress, read without the lease (`nil` before the first round).
    public static func progress(in ledger: any Ledger) async throws(LedgerError) -> Progress? {
        let states = try await ledger.leasedValues(Progress.self, prefix: stateName)
        guard let state = states.first(where: { $0.state.name == stateName }) else { return nil }
        return try state.value.get()
    }

    public func round() async throws -> WorkerPace {
        try await step().pace(now: now())
    }

    public func stop() async {
        do throws(LedgerError) {
            try await outbox.release()
        } catch {
            logger.debug("transaction actions: the lease could not be released", metadata: ["error": "\(error.code)"])
        }
    }

    /// What one step did.
    public typealias Step = OutboxStep

    /// Handles the events after its place, up to a page, saving the place after each call.
    public func step() async throws(LedgerError) -> Step {
        var progress: Progress
        switch try await outbox.acquire() {
        case .held(let held): progress = held
        case .started: return .progressed
        case .notHolder: return .notHolder
        }
        guard let events = try await outbox.events(after: progress.sequence) else {
            logger.warning("transaction actions: events past its place were deleted by retention; continuing from the oldest kept")
            progress.sequence = 0
            return try await outbox.save(progress) ? .progressed : .notHolder
        }
        guard !events.isEmpty else { return .idle }
        for event in events {
            for action in try await actions(for: event) {
                switch await perform(action, event: event) {
                case .done:
                    if action.kind == .finish { progress.finished += 1 } else { progress.linked += 1 }
                    progress.lastActionAt = now()
                case .refused(let error):
                    progress.failed += 1
                    progress.lastError = "\(error.code): \(error.reason)"
                    progress.lastErrorTransactionId = event.transactionId
                case .retry(let error):
                    // Keep the place before this event (its earlier actions done are saved too,
                    // and repeated: both calls are idempotent at Apple).
                    progress.lastError = "\(error.code): \(error.reason)"
                    progress.lastErrorTransactionId = event.transactionId
                    guard try await outbox.save(progress) else { return .notHolder }
                    return .waitUntil(error.retryAfter ?? now().addingTimeInterval(30))
                }
            }
            progress.sequence = event.sequence
            guard try await outbox.save(progress) else { return .notHolder }
        }
        return .progressed
    }

    /// One call to make.
    struct Action: Sendable, Hashable {
        enum Kind: String, Sendable { case finish, link }
        let kind: Kind
        let environment: AppStoreEnvironment
        let transactionId: String
        let originalTransactionId: String
        let token: UUID?
    }

    /// The calls `event` asks for: none unless it is a transaction's gain, the transaction is
    /// still granted, and its environment has a client.
    func actions(for event: LedgerEvent) async throws(LedgerError) -> [Action] {
        guard [.purchaseRecorded, .subscriptionRenewed, .consumableCredited].contains(event.type),
              let environment = event.environment, let transactionId = event.transactionId,
              clients.serving(environment) != nil
        else { return [] }
        guard let transaction = try await ledger.transaction(transactionId, in: environment), !transaction.isRevoked,
              transaction.account == event.account
        else { return [] }
        var actions: [Action] = []
        if settings.linkAccounts, event.type != .subscriptionRenewed, transaction.appAccountToken == nil,
           let token = settings.accountTokenPolicy.token(for: event.account) {
            actions.append(Action(kind: .link, environment: environment, transactionId: transactionId, originalTransactionId: transaction.originalTransactionId, token: token))
        }
        if settings.finishTransactions {
            actions.append(Action(kind: .finish, environment: environment, transactionId: transactionId, originalTransactionId: transaction.originalTransactionId, token: nil))
        }
        return actions
    }

    enum Outcome {
        case done
        case refused(AppStoreClientError)
        case retry(AppStoreClientError)
    }

    /// Makes one call; the outcome is counted and logged (never the token).
    func perform(_ action: Action, event: LedgerEvent) async -> Outcome {
        guard let client = clients.serving(action.environment) else { return .done }
        let outcome: Outcome
        do throws(AppStoreClientError) {
            switch action.kind {
            case .finish: try await client.finishTransaction(transactionId: action.transactionId)
            case .link:
                if let token = action.token { try await client.setAppAccountToken(originalTransactionId: action.originalTransactionId, appAccountToken: token) }
            }
            outcome = .done
        } catch where error.isRetryable || error.code == .rateLimited || error.code == .unauthorized {
            outcome = .retry(error)
        } catch {
            outcome = .refused(error)
        }
        let name: String
        switch outcome {
        case .done: name = "done"
        case .refused(let error):
            name = "refused"
            logger.warning("Apple refused a transaction action", metadata: [
                "action": "\(action.kind.rawValue)", "transaction.id": "\(action.transactionId)", "account": "\(event.account.rawValue)", "error": "\(error.code)",
            ])
        case .retry(let error):
            name = "retry"
            logger.info("Apple unavailable for a transaction action; retrying later", metadata: [
                "action": "\(action.kind.rawValue)", "transaction.id": "\(action.transactionId)", "error": "\(error.code)",
            ])
        }
        Counter(label: "storegate_sync_transaction_actions_total", dimensions: [("action", action.kind.rawValue), ("outcome", name)], factory: metrics).increment()
        return outcome
    }
}

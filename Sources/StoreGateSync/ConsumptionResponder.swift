public import Foundation
public import Logging
public import Metrics
public import StoreGateWorkers
public import StoreGateAppStoreClient
public import StoreGateCore
public import StoreGateLedger

/// What the app states about every consumption request, beyond what the ledger knows.
public struct ConsumptionSettings: Sendable, Hashable {
    /// The app collected its customers' consent to share consumption data
    /// (`STOREGATE_CONSUMPTION=consented`). Without it nothing is sent: Apple takes consumption
    /// information only with the customer's consent.
    public var customerConsented = false
    /// The app offers a free sample, trial or description before purchase
    /// (`STOREGATE_CONSUMPTION_SAMPLE_CONTENT`).
    public var sampleContentProvided = false
    /// The app's refund preference, if it states one (`STOREGATE_CONSUMPTION_REFUND_PREFERENCE`):
    /// the preference when no rule of ``refundPolicy`` holds.
    public var refundPreference: ConsumptionInformation.RefundPreference?
    /// Rules choosing the preference per request (`STOREGATE_CONSUMPTION_REFUND_POLICY`);
    /// the first that holds decides.
    public var refundPolicy: ConsumptionRefundPolicy?
    /// How long after Apple signed the request it still takes an answer (12 hours).
    public var window: Duration = .seconds(12 * 3600)
    /// The first retry's wait; it doubles with every failure, up to ``maximumBackoff``.
    public var initialBackoff: Duration = .seconds(30)
    /// The longest wait between two attempts.
    public var maximumBackoff: Duration = .seconds(3600)
    /// How often pending answers are looked for.
    public var pollInterval: Duration = .seconds(10)
    /// How long a finished request (sent, expired, failed) is kept for the status before it is
    /// deleted (30 days).
    public var retention: Duration = .seconds(30 * 86_400)

    /// The waits between a request's attempts: ``initialBackoff`` doubling to ``maximumBackoff``.
    public var backoff: Backoff { Backoff(first: initialBackoff, maximum: maximumBackoff, jitter: 0) }

    /// Creates the defaults: nothing is sent.
    public init() {}
}

/// Answers Apple's `CONSUMPTION_REQUEST` notifications with Send Consumption Information
/// (`PUT /inApps/v2/transactions/consumption/{transactionId}`), every field derived from the
/// ledger at the moment of sending (``ConsumptionAnswer``): a consumable's percentage is that
/// of the requested purchase (``ConsumptionAllocation``), the refund preference comes from the
/// app's policy (``ConsumptionRefundPolicy``), and nothing Apple's documented rules refuse is
/// sent — what had to change is kept with the request and shown in its status.
///
/// Requests wait in the ledger (a leased state per notification), so a crash loses none and a
/// request seen by both the webhook and the sync is answered once. Each answer is sent under a
/// lease by one instance, retried with exponential backoff (Apple's `Retry-After` when it gives
/// one) until Apple's 12-hour window closes; an answer Apple refuses for good is marked
/// failed. ``summary(at:)`` and the `storegate_sync_consumption_total` metric show them.
public struct ConsumptionResponder: PeriodicWorker {
    /// The prefix of the requests' names among the ledger's leased states.
    public static let statePrefix = "consumption/"

    /// Where one request stands.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// Waiting for its (next) attempt.
        case pending
        /// Apple took the answer.
        case sent
        /// Apple's window closed before an answer was taken.
        case expired
        /// Apple refused the answer for good, or no client serves its environment.
        case failed
    }

    /// One request as the ledger keeps it.
    struct Request: Codable, Sendable, Hashable {
        var notificationUUID: String
        /// The environment of the transaction in the ledger.
        var environment: String
        var transactionId: String
        /// The product's type as Apple's request named it (`nil` in requests stored before it
        /// was kept), for a purchase the ledger does not know.
        var productType: String?
        /// When Apple signed the request (ms): the window starts there.
        var requestedAt: Int64
        var state: State = .pending
        var attempts = 0
        var nextAttemptAt: Int64
        var lastError: String?
        var finishedAt: Int64?
        /// The body sent, for the record (no secret in it).
        var sent: SentFields?

        /// Whether Apple's window closed before `date` (ms).
        func isPastWindow(at date: Int64, window: Duration) -> Bool {
            date > requestedAt + window.milliseconds
        }
    }

    /// The fields sent, kept with the request.
    struct SentFields: Codable, Sendable, Hashable {
        var deliveryStatus: String
        var consumptionPercentage: Int?
        var refundPreference: String?
        /// What chose the preference (``ConsumptionAnswer/preferenceSource``).
        var preferenceSource: String?
        /// What was changed to meet Apple's rules (``ConsumptionAnswer/adjustment``).
        var adjustment: String?
    }

    /// One request as the status shows it.
    public struct RequestStatus: Sendable, Hashable {
        /// The transaction Apple asked about.
        public var transactionId: String
        /// The environment of the transaction.
        public var environment: String
        /// Where it stands.
        public var state: State
        /// When Apple signed the request.
        public var requestedAt: Date
        /// Attempts made.
        public var attempts: Int
        /// The `deliveryStatus` sent, once sent.
        public var deliveryStatus: String?
        /// The `consumptionPercentage` sent, once sent (`nil` also when omitted).
        public var consumptionPercentage: Int?
        /// The `refundPreference` sent, once sent (`nil` also when none was stated).
        public var refundPreference: String?
        /// What chose the preference.
        public var preferenceSource: String?
        /// What was changed to meet Apple's rules and why.
        public var adjustment: String?
        /// Why the last attempt failed (not for a sent request).
        public var lastError: String?
    }

    /// What the requests look like now.
    public struct Summary: Sendable, Hashable {
        /// Requests per state.
        public var counts: [State: Int] = [:]
        /// The transaction of the latest failure, if any.
        public var lastErrorTransactionId: String?
        /// Why it failed.
        public var lastError: String?
        /// Stored requests that do not decode: shown, never counted as anything else.
        public var unreadable = 0
        /// Answers sent after a change to meet Apple's rules.
        public var adjusted = 0
        /// The transaction of the latest such answer, if any.
        public var lastAdjustmentTransactionId: String?
        /// What was changed in it and why.
        public var lastAdjustment: String?
        /// The newest requests (at most ``recentLimit``), newest first.
        public var recent: [RequestStatus] = []

        /// How many requests ``recent`` lists.
        public static let recentLimit = 20

        /// An empty summary.
        public init() {}

        /// The requests in `state` (0 when none).
        public subscript(state: State) -> Int { counts[state] ?? 0 }
    }

    /// What one pass did.
    public struct Pass: Sendable, Hashable {
        /// Answers Apple took.
        public var sent = 0
        /// Attempts that failed and wait for another.
        public var retried = 0
        /// Requests whose window closed.
        public var expired = 0
        /// Answers Apple refused for good.
        public var failed = 0
        /// Stored requests that do not decode (reported, left for an operator).
        public var unreadable = 0

        /// Nothing done.
        public init() {}
    }

    private let clients: [AppStoreEnvironment: AppStoreServerAPIClient]
    private let ledger: any Ledger
    public let settings: ConsumptionSettings
    public let schedule: WorkerSchedule
    private let holder: String
    private let metrics: any MetricsFactory
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// Creates a responder.
    ///
    /// - Parameters:
    ///   - clients: One App Store Server API client per environment answered.
    ///   - ledger: Where requests wait and what the fields are derived from.
    ///   - settings: Consent, sample content, refund preference, window, backoff.
    ///   - holder: This instance's name in leases.
    ///   - metrics: Where `storegate_sync_consumption_total` is counted.
    ///   - logger: Receives each answer and failure (transaction ids, never a payload).
    ///   - now: The clock.
    public init(
        clients: [AppStoreServerAPIClient], ledger: any Ledger, settings: ConsumptionSettings, holder: String,
        metrics: any MetricsFactory = MetricsSystem.factory, logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.clients = Dictionary(clients.map { ($0.environment, $0) }, uniquingKeysWith: { first, _ in first })
        self.ledger = ledger
        self.settings = settings
        self.schedule = WorkerSchedule(interval: settings.pollInterval, backoff: Backoff(first: .seconds(5), maximum: .seconds(300)))
        self.holder = holder
        self.metrics = metrics
        self.logger = logger
        self.now = now
    }

    /// Queues the answer to a `CONSUMPTION_REQUEST` once per notification (the webhook and the
    /// sync both call this; the second call finds it queued). Other notifications are ignored,
    /// and so is every notification when consent is not configured.
    ///
    /// - Throws: When the ledger could not keep the request: the caller fails too, so Apple
    ///   (or the next sync) delivers the notification again.
    public func enqueue(_ notification: VerifiedNotification) async throws(LedgerError) {
        guard notification.notificationType == "CONSUMPTION_REQUEST", let transaction = notification.transaction else { return }
        guard settings.customerConsented else {
            logger.info("a consumption request is not answered: STOREGATE_CONSUMPTION is off", metadata: ["transaction.id": "\(transaction.transactionId)"])
            return
        }
        let key = Self.state(environment: notification.environment, notificationUUID: notification.notificationUUID)
        let requestedAt = notification.signedDate.ledgerMilliseconds
        var request = Request(
            notificationUUID: notification.notificationUUID, environment: notification.environment.rawValue,
            transactionId: transaction.transactionId, productType: transaction.productType?.rawValue, requestedAt: requestedAt,
            nextAttemptAt: now().ledgerMilliseconds
        )
        // Another holder working on it means it is queued already.
        guard let state = try await ledger.acquireLease(on: key.name, holder: holder, now: now(), lease: .seconds(30)) else { return }
        if state.value == nil {
            if request.isPastWindow(at: now().ledgerMilliseconds, window: settings.window) {
                // Recovered by the sync after Apple's window: kept, visibly too late.
                finish(&request, as: .expired)
            }
            _ = try await ledger.save(key, request, holder: holder, now: now(), lease: .seconds(30))
        }
        try await ledger.releaseLease(on: key.name, holder: holder)
    }

    public var workerName: String { "consumption_answers" }

    public func round() async throws -> WorkerPace {
        var pass = Pass()
        try await answerDue(into: &pass)
        return .idle
    }

    /// Sends every due answer once; a ledger failure is logged and ends the pass.
    public func processOnce() async -> Pass {
        var pass = Pass()
        do throws(LedgerError) {
            try await answerDue(into: &pass)
        } catch {
            logger.warning("consumption answers: the ledger failed", metadata: ["error": "\(error.code)", "reason": "\(error.reason)"])
        }
        return pass
    }

    /// Sends every due answer once, counting into `pass`.
    ///
    /// A stored request that does not decode is logged and counted (``Pass/unreadable``) and
    /// the others go on.
    ///
    /// - Throws: The ledger's failure; the requests not reached wait for the next pass.
    public func answerDue(into pass: inout Pass) async throws(LedgerError) {
        for leased in try await ledger.leasedValues(Request.self, prefix: Self.statePrefix) {
            let state = leased.state
            let stored: Request?
            do throws(LedgerError) {
                stored = try leased.get()
            } catch {
                pass.unreadable += 1
                logger.error("consumption answers: a stored request does not decode; it is left for an operator", metadata: [
                    "state": "\(state.name)", "error": "\(error.reason)",
                ])
                continue
            }
            guard var request = stored, !state.isLeased(at: now()) else { continue }
            if let finished = request.finishedAt, request.state != .pending {
                // Kept for the status a while, then deleted, so the list stays short.
                if finished + settings.retention.milliseconds < now().ledgerMilliseconds {
                    try await remove(state.name)
                }
                continue
            }
            guard request.nextAttemptAt <= now().ledgerMilliseconds else { continue }
            let key = LeasedValue<Request>(state.name)
            guard let fresh = try await ledger.acquireLease(on: key, holder: holder, now: now(), lease: .seconds(120)) else { continue }
            // Another instance may have answered it since the list was read.
            guard let current = try fresh.get(), current.state == .pending else {
                try await ledger.releaseLease(on: state.name, holder: holder)
                continue
            }
            request = current
            switch await attempt(&request) {
            case .sent?: pass.sent += 1
            case .expired?: pass.expired += 1
            case .failed?: pass.failed += 1
            case .pending?, nil: pass.retried += 1
            }
            _ = try await ledger.save(key, request, holder: holder, now: now(), lease: .seconds(1))
            try await ledger.releaseLease(on: state.name, holder: holder)
        }
    }

    /// Deletes a finished request, under its lease.
    private func remove(_ name: String) async throws(LedgerError) {
        guard try await ledger.acquireLease(on: name, holder: holder, now: now(), lease: .seconds(30)) != nil else { return }
        _ = try await ledger.removeLeasedState(name, holder: holder)
    }

    /// One attempt at a pending request; updates it in place.
    ///
    /// - Returns: The state it ended in, `nil` when it waits for another attempt.
    private func attempt(_ request: inout Request) async -> State? {
        let at = now()
        if request.isPastWindow(at: at.ledgerMilliseconds, window: settings.window) {
            finish(&request, as: .expired)
            logger.warning("a consumption request expired unanswered", metadata: ["transaction.id": "\(request.transactionId)", "attempts": "\(request.attempts)"])
            return .expired
        }
        let environment = AppStoreEnvironment(rawValue: request.environment)
        guard let client = clients.serving(environment) else {
            finish(&request, as: .failed, error: "no App Store Server API client for \(environment.rawValue)")
            return .failed
        }
        request.attempts += 1
        do {
            let answer = try await answer(for: request, in: environment, at: at)
            let information = answer.information
            try await client.sendConsumptionInformation(transactionId: request.transactionId, information)
            request.sent = SentFields(
                deliveryStatus: information.deliveryStatus.rawValue, consumptionPercentage: information.consumptionPercentage,
                refundPreference: information.refundPreference?.rawValue, preferenceSource: answer.preferenceSource, adjustment: answer.adjustment
            )
            finish(&request, as: .sent)
            logger.info("consumption information sent", metadata: [
                "transaction.id": "\(request.transactionId)", "delivery": "\(information.deliveryStatus.rawValue)",
                "consumption.milliunits": "\(information.consumptionPercentage.map(String.init) ?? "-")",
                "refund.preference": "\(information.refundPreference?.rawValue ?? "-")", "adjustment": "\(answer.adjustment ?? "-")",
            ])
            return .sent
        } catch let error as AppStoreClientError where !(error.isRetryable || error.code == .unauthorized) {
            finish(&request, as: .failed, error: "\(error.code): \(error.reason)")
            logger.error("Apple refused the consumption information", metadata: ["transaction.id": "\(request.transactionId)", "error": "\(error.code): \(error.reason)"])
            return .failed
        } catch {
            var next = now().ledgerMilliseconds + settings.backoff.baseDelay(afterFailures: request.attempts).milliseconds
            if let retryAfter = (error as? AppStoreClientError)?.retryAfter { next = max(next, retryAfter.ledgerMilliseconds) }
            request.nextAttemptAt = next
            request.lastError = (error as? AppStoreClientError).map { "\($0.code): \($0.reason)" } ?? "\(error)"
            SyncMetrics.consumption("retry", environment: request.environment, factory: metrics)
            logger.warning("consumption information not sent; retrying", metadata: [
                "transaction.id": "\(request.transactionId)", "attempts": "\(request.attempts)", "error": "\(request.lastError ?? "")",
            ])
            return nil
        }
    }

    /// Ends a request as `state` (sent, expired or failed) and counts it; a sent request keeps
    /// no error, the others the given one or the last attempt's.
    private func finish(_ request: inout Request, as state: State, error: String? = nil) {
        request.state = state
        request.finishedAt = now().ledgerMilliseconds
        if state == .sent {
            request.lastError = nil
        } else if let error {
            request.lastError = error
        }
        SyncMetrics.consumption(state.rawValue, environment: request.environment, factory: metrics)
    }

    /// The answer to one request, from the ledger's facts now.
    private func answer(for request: Request, in environment: AppStoreEnvironment, at date: Date) async throws -> ConsumptionAnswer {
        let recorded = try await ledger.transaction(request.transactionId, in: environment)
        var entitlements: Entitlements?
        if let account = recorded?.account {
            entitlements = try await ledger.entitlements(for: account, at: date)
        }
        let facts = ConsumptionFacts(transaction: recorded, productType: request.productType.map(ProductType.init(rawValue:)), entitlements: entitlements)
        let answer = ConsumptionAnswer(facts: facts, settings: settings, at: date)
        if let rule = answer.information.brokenRule {
            // Nothing Apple's rules refuse is sent (consent is checked before queueing; this is the guard).
            throw AppStoreClientError(.invalidRequest, reason: rule.description)
        }
        return answer
    }

    /// Every request's state, read from the ledger (so any instance answers the same).
    public static func summary(of store: any LeasedStateStore) async throws(LedgerError) -> Summary {
        var summary = Summary()
        var latest: Int64 = .min
        var latestAdjustment: Int64 = .min
        for leased in try await store.leasedValues(Request.self, prefix: statePrefix) {
            let request: Request
            do throws(LedgerError) {
                guard let stored = try leased.get() else { continue }
                request = stored
            } catch {
                summary.unreadable += 1
                summary.lastError = "\(error.code): \(error.reason)"
                continue
            }
            summary.counts[request.state, default: 0] += 1
            summary.recent.append(RequestStatus(
                transactionId: request.transactionId, environment: request.environment, state: request.state,
                requestedAt: Date(ledgerMilliseconds: request.requestedAt), attempts: request.attempts,
                deliveryStatus: request.sent?.deliveryStatus, consumptionPercentage: request.sent?.consumptionPercentage,
                refundPreference: request.sent?.refundPreference, preferenceSource: request.sent?.preferenceSource,
                adjustment: request.sent?.adjustment, lastError: request.state == .sent ? nil : request.lastError
            ))
            if let adjustment = request.sent?.adjustment {
                summary.adjusted += 1
                if (request.finishedAt ?? .min) >= latestAdjustment {
                    latestAdjustment = request.finishedAt ?? .min
                    summary.lastAdjustmentTransactionId = request.transactionId
                    summary.lastAdjustment = adjustment
                }
            }
            if let error = request.lastError, request.state != .sent, (request.finishedAt ?? request.nextAttemptAt) >= latest {
                latest = request.finishedAt ?? request.nextAttemptAt
                summary.lastErrorTransactionId = request.transactionId
                summary.lastError = error
            }
        }
        summary.recent.sort { ($0.requestedAt, $0.transactionId) > ($1.requestedAt, $1.transactionId) }
        summary.recent = Array(summary.recent.prefix(Summary.recentLimit))
        return summary
    }

    /// The request of one notification: `consumption/<environment>/<notificationUUID>`.
    static func state(environment: AppStoreEnvironment, notificationUUID: String) -> LeasedValue<Request> {
        LeasedValue(statePrefix + environment.rawValue + "/" + notificationUUID)
    }
}

extension Duration {
    /// Whole milliseconds.
    fileprivate var milliseconds: Int64 { Int64((seconds * 1000).rounded()) }
}

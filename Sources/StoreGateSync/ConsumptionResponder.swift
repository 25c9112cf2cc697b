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
    /// The app's refund preference, if it states one (`STOREGATE_CONSUMPTION_REFUND_PREFERENCE`).
    public var refundPreference: ConsumptionInformation.RefundPreference?
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
/// ledger at the moment of sending:
///
/// - `customerConsented`: the app's setting; nothing is sent without it.
/// - `deliveryStatus`: `DELIVERED` when the ledger recorded the transaction for an account
///   (the app's server presented its proof, so it granted the purchase), `UNDELIVERED_OTHER`
///   when no account ever claimed it (Apple's notification is all the ledger has).
/// - `consumptionPercentage` (milliunits):
///   - a consumable: the account's consumed units of the product over its units bought and not
///     refunded (the ledger keeps one balance per product and account, not per transaction);
///   - a non-renewing subscription: the part of its period (purchase to expiry) elapsed when
///     the answer is sent, or when it was revoked;
///   - undelivered: 0;
///   - a non-consumable: omitted (the ledger does not know how much of it was used), and an
///     auto-renewable subscription: omitted (Apple takes none for them).
/// - `sampleContentProvided` and `refundPreference`: the app's settings
///   (`GRANT_PRORATED` is dropped when no percentage above 0 is known, as Apple requires).
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

    /// The information for one transaction, from what the ledger recorded.
    ///
    /// - Parameters:
    ///   - transaction: The transaction as recorded (`nil`: the ledger does not know it).
    ///   - balance: For a consumable recorded for an account, that account's balance of it.
    ///   - settings: The app's statements.
    ///   - date: When the answer is sent (a non-renewing subscription's elapsed part).
    public static func information(
        for transaction: RecordedTransaction?, balance: ConsumableBalance?, settings: ConsumptionSettings, at date: Date
    ) -> ConsumptionInformation {
        let delivered = transaction?.account != nil
        var percentage: Int?
        if !delivered {
            percentage = 0
        } else if let transaction {
            switch transaction.productType {
            case .consumable:
                if let balance, balance.purchased > 0 {
                    percentage = min(100_000, max(0, balance.consumed * 100_000 / balance.purchased))
                }
            case .nonRenewing:
                if let expires = transaction.expiresDate, expires > transaction.purchaseDate {
                    let end = min(date, transaction.revocationDate ?? date)
                    let elapsed = end.timeIntervalSince(transaction.purchaseDate) / expires.timeIntervalSince(transaction.purchaseDate)
                    percentage = Int((min(1, max(0, elapsed)) * 100_000).rounded(.down))
                }
            default:
                break
            }
        }
        var preference = settings.refundPreference
        if preference == .grantProrated, (percentage ?? 0) == 0 { preference = nil }
        return ConsumptionInformation(
            customerConsented: settings.customerConsented, consumptionPercentage: percentage,
            deliveryStatus: delivered ? .delivered : .undeliveredOther, sampleContentProvided: settings.sampleContentProvided,
            refundPreference: preference
        )
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
            transactionId: transaction.transactionId, requestedAt: requestedAt, nextAttemptAt: now().ledgerMilliseconds
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
            let information = try await information(for: request.transactionId, in: environment, at: at)
            try await client.sendConsumptionInformation(transactionId: request.transactionId, information)
            request.sent = SentFields(
                deliveryStatus: information.deliveryStatus.rawValue, consumptionPercentage: information.consumptionPercentage,
                refundPreference: information.refundPreference?.rawValue
            )
            finish(&request, as: .sent)
            logger.info("consumption information sent", metadata: [
                "transaction.id": "\(request.transactionId)", "delivery": "\(information.deliveryStatus.rawValue)",
                "consumption.milliunits": "\(information.consumptionPercentage.map(String.init) ?? "-")",
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

    /// The ledger's facts for one transaction.
    private func information(for transactionId: String, in environment: AppStoreEnvironment, at date: Date) async throws -> ConsumptionInformation {
        let recorded = try await ledger.transaction(transactionId, in: environment)
        var balance: ConsumableBalance?
        if let recorded, let account = recorded.account, recorded.productType == .consumable {
            balance = try await ledger.balance(of: recorded.productId, for: account)
        }
        return Self.information(for: recorded, balance: balance, settings: settings, at: date)
    }

    /// Every request's state, read from the ledger (so any instance answers the same).
    public static func summary(of store: any LeasedStateStore) async throws(LedgerError) -> Summary {
        var summary = Summary()
        var latest: Int64 = .min
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
            if let error = request.lastError, request.state != .sent, (request.finishedAt ?? request.nextAttemptAt) >= latest {
                latest = request.finishedAt ?? request.nextAttemptAt
                summary.lastErrorTransactionId = request.transactionId
                summary.lastError = error
            }
        }
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

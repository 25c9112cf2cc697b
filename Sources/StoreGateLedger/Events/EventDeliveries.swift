public import Foundation

/// Where one event stands in its delivery to one webhook endpoint.
public struct EventDelivery: Sendable, Hashable {
    public enum Status: String, Sendable, Hashable, CaseIterable {
        /// Waiting for its first attempt, or for a retry.
        case pending
        /// The endpoint answered 2xx.
        case delivered
        /// Every retry failed until the retry window closed; redeliver it by hand.
        case failed
    }

    /// The endpoint's configured name.
    public var endpoint: String
    /// The event's sequence.
    public var sequence: Int64
    public var eventId: String
    public var eventType: String
    public var account: AccountID
    public var status: Status
    /// Attempts made so far.
    public var attempts: Int
    /// When the first attempt was made (the retry window counts from it).
    public var firstAttemptAt: Date?
    /// When the next attempt is due (pending deliveries).
    public var nextAttemptAt: Date?
    /// The last attempt's HTTP status, when the endpoint answered.
    public var lastStatus: Int?
    /// Why the last attempt failed (a status, a timeout, a connection error); never a secret.
    public var lastError: String?
    /// When the endpoint accepted it.
    public var deliveredAt: Date?

    public init(
        endpoint: String, sequence: Int64, eventId: String, eventType: String, account: AccountID, status: Status,
        attempts: Int, firstAttemptAt: Date?, nextAttemptAt: Date?, lastStatus: Int?, lastError: String?, deliveredAt: Date?
    ) {
        self.endpoint = endpoint
        self.sequence = sequence
        self.eventId = eventId
        self.eventType = eventType
        self.account = account
        self.status = status
        self.attempts = attempts
        self.firstAttemptAt = firstAttemptAt
        self.nextAttemptAt = nextAttemptAt
        self.lastStatus = lastStatus
        self.lastError = lastError
        self.deliveredAt = deliveredAt
    }
}

extension EventDeliveryStore {
    /// Records one attempt's result (see ``complete(endpoint:results:holder:at:)``).
    ///
    /// - Returns: Whether it was recorded.
    @discardableResult
    public func complete(endpoint: String, sequence: Int64, holder: String, result: DeliveryResult, at date: Date) async throws(LedgerError) -> Bool {
        try await complete(endpoint: endpoint, results: [(sequence, result)], holder: holder, at: date).contains(sequence)
    }
}

/// A delivery claimed by one deliverer until its lease ends.
public struct ClaimedDelivery: Sendable, Hashable {
    public var event: LedgerEvent
    /// Attempts made before this one.
    public var attempts: Int
    /// When the first attempt was made (`nil` before the first).
    public var firstAttemptAt: Date?

    public init(event: LedgerEvent, attempts: Int, firstAttemptAt: Date?) {
        self.event = event
        self.attempts = attempts
        self.firstAttemptAt = firstAttemptAt
    }
}

/// The result of one delivery attempt.
public enum DeliveryResult: Sendable, Hashable {
    /// The endpoint accepted the event.
    case delivered(status: Int)
    /// It failed; try again at `next`.
    case retry(next: Date, status: Int?, error: String)
    /// It failed and the retry window is closed.
    case failed(status: Int?, error: String)
    /// The endpoint answered 410 Gone and was disabled: the delivery stays pending, due at
    /// `next` (it goes as soon as the endpoint is enabled again). The attempt is counted, and
    /// the retry window starts again with the first attempt after that, so the time an
    /// endpoint spends disabled never fails its deliveries.
    case held(next: Date, status: Int?, error: String)
}

/// The webhook deliveries of the ledger's events, kept in the ledger's own database so that
/// nothing is lost across crashes and several instances share the work.
///
/// For each endpoint, ``fanOut(endpoint:types:limit:now:)`` turns events after the endpoint's
/// cursor into pending deliveries; ``claim(endpoint:now:limit:lease:holder:)`` hands out due
/// ones — never an event while an earlier event of the same account is still pending for that
/// endpoint, so each account's events arrive in order — and leases them to one deliverer
/// (a killed deliverer's lease runs out and another takes them); ``complete(endpoint:results:holder:at:)``
/// records the attempt. A failed delivery stops blocking its account, shows in
/// ``deliveries(endpoint:status:after:limit:)`` and can be sent again with
/// ``redeliver(endpoint:sequence:at:)``.
public protocol EventDeliveryStore: Sendable {
    /// Moves up to `limit` events after the endpoint's cursor into pending deliveries (those
    /// of `types`, or all when `nil`) and advances the cursor past them. An endpoint receives
    /// the events recorded after it was added: one stored through
    /// `LiveAdminStore.createWebhookEndpoint(_:)` is placed at the end of the stream as it is
    /// stored; a name never stored is placed there by its first fan-out.
    ///
    /// - Returns: How many events were scanned (0 when the endpoint is up to date, or when
    ///   another instance is fanning out for it right now).
    func fanOut(endpoint: String, types: Set<String>?, limit: Int, now: Date) async throws(LedgerError) -> Int

    /// Leases up to `limit` due pending deliveries to `holder`, oldest first, at most the
    /// oldest pending one per account.
    func claim(endpoint: String, now: Date, limit: Int, lease: Duration, holder: String) async throws(LedgerError) -> [ClaimedDelivery]

    /// Records attempts' results, in one transaction, for the deliveries `holder` still holds
    /// the lease of (a result whose lease another deliverer took over is dropped: theirs counts).
    ///
    /// - Returns: The sequences whose results were recorded.
    @discardableResult
    func complete(endpoint: String, results: [(sequence: Int64, result: DeliveryResult)], holder: String, at date: Date) async throws(LedgerError) -> Set<Int64>

    /// Deliveries by status (any when `nil`) and endpoint (any when `nil`), by sequence after `after`.
    func deliveries(endpoint: String?, status: EventDelivery.Status?, after: Int64, limit: Int) async throws(LedgerError) -> [EventDelivery]

    /// Makes a delivery pending again, due now, with its attempts reset.
    ///
    /// - Returns: Whether such a delivery exists.
    @discardableResult
    func redeliver(endpoint: String, sequence: Int64, at date: Date) async throws(LedgerError) -> Bool

    /// How many deliveries each endpoint has in each of `statuses` (the pending and failed
    /// ones are indexed; counting every delivered one reads them all).
    func deliveryCounts(of statuses: Set<EventDelivery.Status>) async throws(LedgerError) -> [String: [EventDelivery.Status: Int]]
}

extension EventDeliveryStore {
    /// How many deliveries each endpoint has in each status.
    public func deliveryCounts() async throws(LedgerError) -> [String: [EventDelivery.Status: Int]] {
        try await deliveryCounts(of: Set(EventDelivery.Status.allCases))
    }
}

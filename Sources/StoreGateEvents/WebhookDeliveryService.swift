public import Foundation
public import Logging
public import CoreMetrics
public import ServiceLifecycle
public import StoreGateAppStoreClient
public import StoreGateLedger
public import StoreGateWorkers
public import StoreGateCore
import Synchronization
import Tracing

/// How deliveries are attempted and retried.
public struct WebhookDeliveryPolicy: Sendable, Hashable {
    /// One attempt's deadline (connect, send, answer).
    public var attemptTimeout: Duration = .seconds(10)
    /// The first retry's delay; each next one doubles, with full jitter between half and all of it.
    public var firstRetry: Duration = .seconds(10)
    /// The longest delay between two attempts.
    public var maximumRetryInterval: Duration = .seconds(6 * 3600)
    /// How long a delivery is retried after its first attempt before it is marked failed.
    public var retryWindow: Duration = .seconds(3 * 86_400)
    /// How often an idle deliverer looks for new events.
    public var pollInterval: Duration = .milliseconds(200)
    /// Deliveries claimed per round and endpoint (sent concurrently).
    public var batchSize: Int = 64
    /// How long a claim outlives its attempt's timeout: an instance killed mid-delivery hands
    /// its deliveries on after `attemptTimeout + leaseMargin`.
    public var leaseMargin: Duration = .seconds(30)
    /// How often the pending and failed deliveries are counted into the
    /// `storegate_webhook_deliveries{endpoint,status}` gauge.
    public var gaugeInterval: Duration = .seconds(10)
    /// How long a deliverer trusts what it last read of an endpoint's state (enabled, or
    /// disabled after a `410 Gone`) before reading the ledger again: an endpoint enabled again
    /// by hand resumes on every instance within this time.
    public var stateInterval: Duration = .seconds(2)

    public init() {}

    /// The waits between attempts: ``firstRetry`` doubling to ``maximumRetryInterval``, each
    /// drawn between half and all of it.
    public var retryBackoff: Backoff {
        Backoff(first: firstRetry, maximum: maximumRetryInterval, multiplier: 2, jitter: 0.5)
    }

    /// The result of a failed attempt: a retry with exponential backoff and jitter, or
    /// `failed` once the next attempt would fall outside the retry window.
    ///
    /// - Parameters:
    ///   - attempts: Attempts made before the one that failed.
    ///   - random: A value in 0...1 placing the wait between half (0) and all (1) of it.
    public func failure(attempts: Int, firstAttemptAt: Date?, now: Date, status: Int?, error: String, random: Double) -> DeliveryResult {
        let delay = retryBackoff.delay(afterFailures: attempts + 1, random: 1 - min(max(random, 0), 1))
        let next = now.addingTimeInterval(delay.seconds)
        if next.timeIntervalSince(firstAttemptAt ?? now) > retryWindow.seconds {
            return .failed(status: status, error: error)
        }
        return .retry(next: next, status: status, error: error)
    }
}

/// Sends the ledger's events to the configured webhook endpoints: a ServiceLifecycle
/// service running one worker per endpoint (``workers``) and one that counts the backlog.
///
/// At least once: an event is sent until the endpoint answers 2xx (or the retry window
/// closes), so a receiver must treat the event `id` as an idempotency key. Each account's
/// events are sent in order, one at a time; different accounts go concurrently. A delivery's
/// lease outlives one attempt, so an instance killed mid-delivery hands it to the next one
/// when the lease ends.
///
/// Every request is signed twice, with every secret of the endpoint: `StoreGate-Signature`
/// (``WebhookSignature``, which Stripe's SDKs verify) and the Standard Webhooks headers
/// `webhook-id`, `webhook-timestamp`, `webhook-signature` (``StandardWebhookSignature``), and
/// carries `StoreGate-Event-Id`, `StoreGate-Event-Type` and `StoreGate-Delivery-Attempt`.
///
/// A receiver answering `410 Gone` disables its endpoint, as the Standard Webhooks
/// specification recommends: the delivery stays pending (``DeliveryResult/held(next:status:error:)``),
/// nothing more is sent to it (new events still become pending deliveries), the
/// `storegate_webhook_endpoint_disabled{endpoint}` gauge reads 1 and an error is logged. The
/// state lives in the ledger (``WebhookEndpointState``), so every instance stops and a restart
/// does not resume; an operator enables it again (``WebhookEndpointState/enable(_:in:holder:now:)``,
/// `POST /v1/webhooks/endpoints/{endpoint}/enable`), and each account's deliveries resume in order.
public final class WebhookDeliveryService: Service, Sendable {
    /// The store the service delivers from: the deliveries, and the endpoints' states.
    public typealias Store = EventDeliveryStore & LeasedStateStore

    public let endpoints: [WebhookEndpoint]
    public let policy: WebhookDeliveryPolicy
    /// This deliverer's name in leases.
    public let holder: String
    private let store: any Store
    private let transport: any HTTPTransport
    private let logger: Logger
    private let metrics: any MetricsFactory
    private let now: @Sendable () -> Date
    /// What this instance last read of each endpoint's state, and when.
    private let states = Mutex<[String: (state: WebhookEndpointState, readAt: ContinuousClock.Instant)]>([:])

    public init(
        store: any Store, endpoints: [WebhookEndpoint], transport: any HTTPTransport, policy: WebhookDeliveryPolicy = WebhookDeliveryPolicy(),
        holder: String = "storegate-\(UUID().uuidString.lowercased())", logger: Logger, metrics: any MetricsFactory = MetricsSystem.factory,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.metrics = metrics
        self.store = store
        self.endpoints = endpoints
        self.transport = transport
        self.policy = policy
        self.holder = holder
        self.logger = logger
        self.now = now
    }

    /// The workers: one per endpoint (fan out, claim, send; again at once while there is
    /// work, every ``WebhookDeliveryPolicy/pollInterval`` when idle, after a backoff of 200 ms
    /// doubling to 5 s while the ledger fails) and one keeping the
    /// `storegate_webhook_deliveries{endpoint,status}` gauge (pending, failed) and the
    /// `storegate_webhook_endpoint_disabled{endpoint}` gauge current.
    public var workers: [any PeriodicWorker] {
        endpoints.map { EndpointWorker(service: self, endpoint: $0) } + [BacklogWorker(service: self)]
    }

    /// Runs the workers until graceful shutdown (without a start gate or health registry; the
    /// server runs ``workers`` with its own).
    public func run() async throws {
        try await PeriodicService.runAll(workers, logger: logger, metrics: metrics, now: now)
    }

    /// Counts the pending and failed deliveries of every endpoint into the gauge, and records
    /// which endpoints are disabled, once.
    public func recordBacklog() async throws(LedgerError) {
        let counts = try await store.deliveryCounts(of: [.pending, .failed])
        for endpoint in endpoints {
            for status in [EventDelivery.Status.pending, .failed] {
                Gauge(label: "storegate_webhook_deliveries", dimensions: [("endpoint", endpoint.name), ("status", status.rawValue)], factory: metrics)
                    .record(counts[endpoint.name]?[status] ?? 0)
            }
        }
        let disabled = try await WebhookEndpointState.all(in: store)
        let readAt = ContinuousClock.now
        for endpoint in endpoints {
            remember(disabled[endpoint.name] ?? .enabled, of: endpoint, at: readAt)
        }
    }

    /// Delivers one endpoint's events.
    struct EndpointWorker: PeriodicWorker {
        let service: WebhookDeliveryService
        let endpoint: WebhookEndpoint

        var workerName: String { "webhooks/\(endpoint.name)" }

        var schedule: WorkerSchedule {
            WorkerSchedule(interval: service.policy.pollInterval, backoff: Backoff(first: .milliseconds(200), maximum: .seconds(5), jitter: 0))
        }

        func round() async throws -> WorkerPace {
            try await service.deliverOnce(endpoint) > 0 ? .again : .idle
        }
    }

    /// Keeps the backlog gauge current.
    struct BacklogWorker: PeriodicWorker {
        let service: WebhookDeliveryService

        var workerName: String { "webhooks_backlog" }

        var schedule: WorkerSchedule { WorkerSchedule(interval: service.policy.gaugeInterval) }

        func round() async throws -> WorkerPace {
            try await service.recordBacklog()
            return .idle
        }
    }

    /// One round for `endpoint`: fans out new events, then — unless the endpoint is disabled —
    /// claims due deliveries and sends them. A `410 Gone` disables the endpoint.
    ///
    /// - Returns: How many events were fanned out or sent (0 when there was nothing to do).
    @discardableResult
    public func deliverOnce(_ endpoint: WebhookEndpoint) async throws(LedgerError) -> Int {
        let fanned = try await store.fanOut(endpoint: endpoint.name, types: endpoint.types, limit: maximumEventPage, now: now())
        guard try await !state(of: endpoint).isDisabled else { return fanned }
        let lease = policy.attemptTimeout + policy.leaseMargin
        let claimed = try await store.claim(endpoint: endpoint.name, now: now(), limit: policy.batchSize, lease: lease, holder: holder)
        guard !claimed.isEmpty else { return fanned }
        let results = await withTaskGroup(of: (ClaimedDelivery, DeliveryResult).self) { group in
            for delivery in claimed {
                group.addTask { (delivery, await self.attempt(delivery, to: endpoint)) }
            }
            var results: [(ClaimedDelivery, DeliveryResult)] = []
            for await result in group { results.append(result) }
            return results
        }
        let gone = results.compactMap { delivery, result -> ClaimedDelivery? in
            if case .held = result { return delivery }
            return nil
        }.min { $0.event.sequence < $1.event.sequence }
        if gone != nil {
            // Before recording: this instance sends nothing more to it from now on.
            remember(.disabled(nil), of: endpoint, at: ContinuousClock.now)
        }
        try await store.complete(
            endpoint: endpoint.name, results: results.map { (sequence: $0.0.event.sequence, result: $0.1) }, holder: holder, at: now()
        )
        if let gone {
            try await disable(endpoint, after: gone)
        }
        return fanned + claimed.count
    }

    /// Where `endpoint` stands: what this instance last read, or the ledger's answer when that
    /// is older than ``WebhookDeliveryPolicy/stateInterval``.
    public func state(of endpoint: WebhookEndpoint) async throws(LedgerError) -> WebhookEndpointState {
        let started = ContinuousClock.now
        if let known = states.withLock({ $0[endpoint.name] }), started - known.readAt < policy.stateInterval {
            return known.state
        }
        let state = try await WebhookEndpointState.of(endpoint.name, in: store)
        remember(state, of: endpoint, at: started)
        return state
    }

    /// Keeps what was read of `endpoint`'s state, and the gauge; logs a change seen here.
    private func remember(_ state: WebhookEndpointState, of endpoint: WebhookEndpoint, at readAt: ContinuousClock.Instant) {
        let previous = states.withLock { states in
            defer { states[endpoint.name] = (state, readAt) }
            return states[endpoint.name]?.state
        }
        Gauge(label: "storegate_webhook_endpoint_disabled", dimensions: [("endpoint", endpoint.name)], factory: metrics)
            .record(state.isDisabled ? 1 : 0)
        if previous?.isDisabled == true, !state.isDisabled {
            logger.notice("a disabled webhook endpoint was enabled again; its deliveries resume", metadata: ["endpoint": "\(endpoint.name)"])
        }
    }

    /// Records in the ledger that `endpoint` answered 410 to `delivery`, and says so.
    private func disable(_ endpoint: WebhookEndpoint, after delivery: ClaimedDelivery) async throws(LedgerError) {
        let at = now()
        let disabling = WebhookEndpointDisabling(disabledAt: at, status: 410, sequence: delivery.event.sequence, eventId: delivery.event.id, holder: holder)
        let recorded = try await WebhookEndpointState.disable(endpoint.name, disabling, in: store, holder: holder, now: at)
        remember(.disabled(disabling), of: endpoint, at: ContinuousClock.now)
        logger.error("a webhook endpoint answered 410 Gone and is disabled: nothing more is sent to it until it is enabled again by hand", metadata: [
            "endpoint": "\(endpoint.name)", "sequence": "\(delivery.event.sequence)", "event.id": "\(delivery.event.id)",
            "recorded": "\(recorded)",
        ])
    }

    /// Sends one delivery once.
    func attempt(_ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint) async -> DeliveryResult {
        // A root span per attempt (deliveries run in the background, apart from the request
        // that recorded the event); its context goes out in `traceparent`.
        await withSpan(Traces.webhookDelivery, context: .topLevel, ofKind: .client) { span in
            span.attributes["storegate.webhook.endpoint"] = endpoint.name
            span.attributes["storegate.event.type"] = delivery.event.type.rawValue
            span.attributes["storegate.webhook.attempt"] = delivery.attempts + 1
            let result = await attemptUntraced(delivery, to: endpoint, span: span)
            switch result {
            case .delivered(let status):
                span.attributes["http.response.status_code"] = status
            case .retry(_, let status, let error), .failed(let status, let error), .held(_, let status, let error):
                if let status { span.attributes["http.response.status_code"] = status }
                span.setStatus(SpanStatus(code: .error, message: error))
            }
            return result
        }
    }

    private func attemptUntraced(_ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint, span: any Span) async -> DeliveryResult {
        let event = delivery.event
        let body = EventJSON.encode(event)
        let sent = now()
        let standard = StandardWebhookSignature.headers(id: event.id, body: body, secrets: endpoint.secrets, at: sent)
        var headers: [TransportRequest.Header] = [
            .init("Content-Type", "application/json"),
            .init("User-Agent", "StoreGate-Webhooks/1"),
            .init(WebhookSignature.headerName, WebhookSignature.header(body: body, secrets: endpoint.secrets, at: sent)),
        ]
        for field in standard.fields {
            headers.append(.init(field.name, field.value))
        }
        headers += [
            .init("StoreGate-Event-Id", event.id),
            .init("StoreGate-Event-Type", event.type.rawValue),
            .init("StoreGate-Delivery-Attempt", String(delivery.attempts + 1)),
        ]
        // W3C trace context (`traceparent`, `tracestate`) when a tracer is bootstrapped; nothing otherwise.
        InstrumentationSystem.instrument.inject(span.context, into: &headers, using: TransportHeaderInjector())
        let request = TransportRequest(method: "POST", url: endpoint.url, headers: headers, body: body)
        let started = ContinuousClock.now
        let status: Int?
        let problem: String
        do throws(AppStoreClientError) {
            let response = try await transport.send(request, deadline: started + policy.attemptTimeout)
            if (200..<300).contains(response.status) {
                count(endpoint, "delivered", since: started)
                return .delivered(status: response.status)
            }
            if response.status == 410 {
                count(endpoint, "disabled", since: started)
                return .held(next: now(), status: 410, error: "HTTP 410: the endpoint is disabled until it is enabled again")
            }
            status = response.status
            problem = "HTTP \(response.status)"
        } catch {
            status = nil
            problem = "\(error.code): \(error.reason)"
        }
        let result = policy.failure(
            attempts: delivery.attempts, firstAttemptAt: delivery.firstAttemptAt, now: now(), status: status, error: problem,
            random: Double.random(in: 0...1)
        )
        let outcome: String
        if case .failed = result { outcome = "failed" } else { outcome = "retry" }
        count(endpoint, outcome, since: started)
        logger.notice("a webhook delivery failed", metadata: [
            "endpoint": "\(endpoint.name)", "sequence": "\(event.sequence)", "attempt": "\(delivery.attempts + 1)",
            "error": "\(problem)", "outcome": "\(outcome)",
        ])
        return result
    }

    private func count(_ endpoint: WebhookEndpoint, _ outcome: String, since started: ContinuousClock.Instant) {
        Counter(label: "storegate_webhook_attempts_total", dimensions: [("endpoint", endpoint.name), ("outcome", outcome)], factory: metrics).increment()
        let elapsed = ContinuousClock.now - started
        Timer(label: "storegate_webhook_attempt_seconds", dimensions: [("endpoint", endpoint.name)], factory: metrics)
            .recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}

public import Foundation
public import Logging
public import CoreMetrics
public import ServiceLifecycle
public import StoreGateLedger
public import StoreGateWorkers
public import StoreGateCore
public import StoreGateHTTP
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

    /// Where the endpoints come from.
    public enum EndpointSource: Sendable {
        /// A fixed list (an embedding application, tests).
        case fixed([WebhookEndpoint])
        /// The ledger's stored endpoints (``WebhookEndpointStore``), read again every
        /// ``WebhookDeliveryPolicy/stateInterval``: an endpoint added, changed, paused or
        /// removed on any instance is followed by every instance within that time.
        case ledger(any WebhookEndpointStore)
    }

    /// The fixed endpoints (empty when they come from the ledger; see ``currentEndpoints()``).
    public let endpoints: [WebhookEndpoint]
    public let policy: WebhookDeliveryPolicy
    /// Which receiver addresses may be called (checked before every round of deliveries).
    public let addressPolicy: WebhookAddressPolicy
    /// This deliverer's name in leases.
    public let holder: String
    private let source: EndpointSource
    private let store: any Store
    private let transport: any HTTPTransport
    private let logger: Logger
    private let metrics: any MetricsFactory
    private let registry: WorkerRegistry?
    private let now: @Sendable () -> Date
    /// What this instance last read of each endpoint's state, and when.
    private let states = Mutex<[String: (state: WebhookEndpointState, readAt: ContinuousClock.Instant)]>([:])
    /// The endpoints being delivered to, by name, and the task delivering to each.
    private let running = Mutex<[String: (endpoint: WebhookEndpoint, task: Task<Void, Never>)]>([:])

    /// A deliverer for a fixed list of endpoints.
    public convenience init(
        store: any Store, endpoints: [WebhookEndpoint], transport: any HTTPTransport, policy: WebhookDeliveryPolicy = WebhookDeliveryPolicy(),
        addressPolicy: WebhookAddressPolicy = WebhookAddressPolicy(), holder: String = "storegate-\(UUID().uuidString.lowercased())", logger: Logger,
        metrics: any MetricsFactory = MetricsSystem.factory, registry: WorkerRegistry? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.init(
            store: store, source: .fixed(endpoints), transport: transport, policy: policy, addressPolicy: addressPolicy, holder: holder, logger: logger,
            metrics: metrics, registry: registry, now: now
        )
    }

    /// A deliverer for the endpoints `source` gives.
    ///
    /// - Parameters:
    ///   - registry: Where the per-endpoint workers report their rounds (readiness).
    public init(
        store: any Store, source: EndpointSource, transport: any HTTPTransport, policy: WebhookDeliveryPolicy = WebhookDeliveryPolicy(),
        addressPolicy: WebhookAddressPolicy = WebhookAddressPolicy(), holder: String = "storegate-\(UUID().uuidString.lowercased())", logger: Logger,
        metrics: any MetricsFactory = MetricsSystem.factory, registry: WorkerRegistry? = nil, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.metrics = metrics
        self.store = store
        self.source = source
        if case .fixed(let endpoints) = source {
            self.endpoints = endpoints
        } else {
            self.endpoints = []
        }
        self.transport = transport
        self.policy = policy
        self.addressPolicy = addressPolicy
        self.holder = holder
        self.logger = logger
        self.registry = registry
        self.now = now
    }

    /// The endpoints to deliver to now: the fixed list, or the ledger's stored endpoints (one
    /// whose stored fields no longer validate is left out and logged).
    public func currentEndpoints() async throws(LedgerError) -> [WebhookEndpoint] {
        switch source {
        case .fixed(let endpoints):
            return endpoints
        case .ledger(let endpointStore):
            var endpoints: [WebhookEndpoint] = []
            for stored in try await endpointStore.webhookEndpoints() {
                do throws(WebhookConfigurationError) {
                    endpoints.append(try WebhookEndpoint(stored))
                } catch {
                    logger.error("a stored webhook endpoint is not valid and receives nothing", metadata: ["endpoint": "\(stored.name)", "error": "\(error)"])
                }
            }
            return endpoints
        }
    }

    /// The workers: one per endpoint (fan out, claim, send; again at once while there is
    /// work, every ``WebhookDeliveryPolicy/pollInterval`` when idle, after a backoff of 200 ms
    /// doubling to 5 s while the ledger fails) and one keeping the
    /// `storegate_webhook_deliveries{endpoint,status}` gauge (pending, failed) and the
    /// `storegate_webhook_endpoint_disabled{endpoint}` gauge current.
    ///
    /// The endpoint workers are started and stopped by a supervisor worker
    /// (`webhooks_endpoints`) that follows ``currentEndpoints()`` every
    /// ``WebhookDeliveryPolicy/stateInterval``; each reports as `webhooks/<endpoint>`.
    public var workers: [any PeriodicWorker] {
        [EndpointSupervisor(service: self), BacklogWorker(service: self)]
    }

    /// Runs the workers until graceful shutdown (without a start gate; the server runs
    /// ``workers`` with its own).
    public func run() async throws {
        try await PeriodicService.runAll(workers, registry: registry, logger: logger, metrics: metrics, now: now)
    }

    /// Starts a worker for each endpoint that has none, hands changed definitions to the
    /// running ones, and stops (and awaits) the workers of endpoints that are gone — whose
    /// cursor, deliveries and disabled record are then removed from a ledger source, in case
    /// this instance fanned out after the deletion.
    public func reconcile() async throws(LedgerError) {
        let current = try await currentEndpoints()
        let names = Set(current.map(\.name))
        var stopped: [(String, Task<Void, Never>)] = []
        running.withLock { running in
            for (name, entry) in running where !names.contains(name) {
                stopped.append((name, entry.task))
                running[name] = nil
            }
            for endpoint in current {
                if running[endpoint.name] != nil {
                    running[endpoint.name]?.endpoint = endpoint
                    continue
                }
                let worker = EndpointWorker(service: self, name: endpoint.name)
                let service = PeriodicService(worker, registry: registry, logger: logger, metrics: metrics, now: now)
                let task = Task<Void, Never> {
                    do { try await service.run() } catch { return }  // it ends by cancellation; a round never throws out of it
                }
                running[endpoint.name] = (endpoint, task)
            }
        }
        for (name, task) in stopped {
            task.cancel()
            await task.value
            registry?.forget("webhooks/\(name)")
            logger.notice("a webhook endpoint was removed; its deliveries stop", metadata: ["endpoint": "\(name)"])
            if case .ledger(let endpointStore) = source {
                try await endpointStore.clearWebhookEndpointLeftovers(named: name, states: [WebhookEndpointState.state(of: name).name])
            }
        }
    }

    /// Stops every endpoint worker (graceful shutdown).
    func stopAll() async {
        let tasks = running.withLock { running in
            defer { running = [:] }
            return running.values.map(\.task)
        }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// The current definition of a running endpoint.
    func live(_ name: String) -> WebhookEndpoint? {
        running.withLock { $0[name]?.endpoint }
    }

    /// Counts the pending and failed deliveries of every endpoint into the gauge, and records
    /// which endpoints are disabled, once.
    public func recordBacklog() async throws(LedgerError) {
        let counts = try await store.deliveryCounts(of: [.pending, .failed])
        let endpoints = try await currentEndpoints()
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

    /// Delivers one endpoint's events, with its current definition (URL, secrets, filter, pause).
    struct EndpointWorker: PeriodicWorker {
        let service: WebhookDeliveryService
        let name: String

        var workerName: String { "webhooks/\(name)" }

        var schedule: WorkerSchedule {
            WorkerSchedule(interval: service.policy.pollInterval, backoff: Backoff(first: .milliseconds(200), maximum: .seconds(5), jitter: 0))
        }

        func round() async throws -> WorkerPace {
            guard let endpoint = service.live(name) else { return .idle }
            return try await service.deliverOnce(endpoint) > 0 ? .again : .idle
        }
    }

    /// Follows the endpoints: starts, updates and stops the endpoint workers.
    struct EndpointSupervisor: PeriodicWorker {
        let service: WebhookDeliveryService

        var workerName: String { "webhooks_endpoints" }

        var schedule: WorkerSchedule { WorkerSchedule(interval: service.policy.stateInterval) }

        func round() async throws -> WorkerPace {
            try await service.reconcile()
            return .idle
        }

        func stop() async {
            await service.stopAll()
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
        guard !endpoint.isPaused else { return fanned }
        guard try await !state(of: endpoint).isDisabled else { return fanned }
        let lease = policy.attemptTimeout + policy.leaseMargin
        let claimed = try await store.claim(endpoint: endpoint.name, now: now(), limit: policy.batchSize, lease: lease, holder: holder)
        guard !claimed.isEmpty else { return fanned }
        // The receiver's host is resolved again before every round: a DNS answer that moved to
        // an internal address since the endpoint was created is refused like the URL would be.
        let refusal: WebhookAddressError?
        do throws(WebhookAddressError) {
            try await addressPolicy.check(endpoint.url)
            refusal = nil
        } catch {
            refusal = error
            logger.error("a webhook endpoint's URL was refused before delivery", metadata: [
                "endpoint": "\(endpoint.name)", "error.code": "\(error.code)", "error": "\(error.reason)",
            ])
        }
        let results = await withTaskGroup(of: (ClaimedDelivery, DeliveryResult).self) { group in
            for delivery in claimed {
                if let refusal {
                    group.addTask { (delivery, self.refused(delivery, to: endpoint, refusal)) }
                } else {
                    group.addTask { (delivery, await self.attempt(delivery, to: endpoint)) }
                }
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

    /// The result of a delivery whose receiver address was refused: a failed attempt (retried
    /// with backoff, failed when the window closes), counted as `refused`.
    private func refused(_ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint, _ refusal: WebhookAddressError) -> DeliveryResult {
        count(endpoint, "refused", since: ContinuousClock.now)
        return policy.failure(
            attempts: delivery.attempts, firstAttemptAt: delivery.firstAttemptAt, now: now(), status: nil, error: "\(refusal.code): \(refusal.reason)",
            random: Double.random(in: 0...1)
        )
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
        let started = ContinuousClock.now
        let status: Int?
        let problem: String
        do throws(WebhookDeliveryError) {
            let response = try await post(
                EventJSON.encode(event), id: event.id, type: event.type.rawValue, attempt: delivery.attempts + 1, to: endpoint, at: now(),
                deadline: started + policy.attemptTimeout, traceContext: span.context
            )
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
            problem = error.description
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

    /// Posts `body` to `endpoint` once, signed with every secret of the endpoint
    /// (`StoreGate-Signature` and the Standard Webhooks headers, dated `sent`) and labelled
    /// with the event's id, type and attempt number; with W3C trace context (`traceparent`,
    /// `tracestate`) when a tracer is bootstrapped and `traceContext` is given.
    ///
    /// - Returns: The receiver's answer, whatever its status.
    /// - Throws: ``WebhookDeliveryError`` when no answer came.
    private func post(
        _ body: [UInt8], id: String, type: String, attempt: Int, to endpoint: WebhookEndpoint, at sent: Date, deadline: ContinuousClock.Instant,
        traceContext: ServiceContext? = nil
    ) async throws(WebhookDeliveryError) -> TransportResponse {
        let standard = StandardWebhookSignature.headers(id: id, body: body, secrets: endpoint.secrets, at: sent)
        var headers: [TransportRequest.Header] = [
            .init("Content-Type", "application/json"),
            .init("User-Agent", "StoreGate-Webhooks/1"),
            .init(WebhookSignature.headerName, WebhookSignature.header(body: body, secrets: endpoint.secrets, at: sent)),
        ]
        for field in standard.fields {
            headers.append(.init(field.name, field.value))
        }
        headers += [.init("StoreGate-Event-Id", id), .init("StoreGate-Event-Type", type), .init("StoreGate-Delivery-Attempt", String(attempt))]
        if let traceContext {
            InstrumentationSystem.instrument.inject(traceContext, into: &headers, using: TransportHeaderInjector())
        }
        do {
            return try await transport.send(TransportRequest(method: "POST", url: endpoint.url, headers: headers, body: body), deadline: deadline)
        } catch {
            throw WebhookDeliveryError(error, endpoint: endpoint.name)
        }
    }

    private func count(_ endpoint: WebhookEndpoint, _ outcome: String, since started: ContinuousClock.Instant) {
        Counter(label: "storegate_webhook_attempts_total", dimensions: [("endpoint", endpoint.name), ("outcome", outcome)], factory: metrics).increment()
        let elapsed = ContinuousClock.now - started
        Timer(label: "storegate_webhook_attempt_seconds", dimensions: [("endpoint", endpoint.name)], factory: metrics)
            .recordNanoseconds(elapsed.components.seconds * 1_000_000_000 + elapsed.components.attoseconds / 1_000_000_000)
    }
}

/// What a test event sent to an endpoint got (`POST /v1/webhooks/endpoints/{endpoint}/test`).
public struct WebhookTestOutcome: Sendable, Hashable {
    /// The test event's id (`webhook-id`).
    public var eventId: String
    /// Whether the receiver answered 2xx.
    public var isDelivered: Bool
    /// The receiver's HTTP status, when it answered.
    public var status: Int?
    /// Why it failed (a status, a refused address, a timeout), never a secret.
    public var error: String?
    /// The refused address's error code, when the URL was refused.
    public var refusal: WebhookAddressError.Code?
    /// Why the receiver gave no answer, when it gave none.
    public var failure: WebhookDeliveryError?
}

extension WebhookDeliveryService {
    /// Sends one `webhook.test` event to `endpoint` now, signed like every delivery, once and
    /// outside the ledger (it is not part of the event stream, nor retried): how an operator
    /// checks a receiver's wiring and its secrets. The address policy applies.
    public func sendTest(to endpoint: WebhookEndpoint) async -> WebhookTestOutcome {
        let id = "evt_test_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        do throws(WebhookAddressError) {
            try await addressPolicy.check(endpoint.url)
        } catch {
            return WebhookTestOutcome(eventId: id, isDelivered: false, status: nil, error: "\(error.code): \(error.reason)", refusal: error.code)
        }
        let sent = now()
        var json = JSONWriter(capacity: 256)
        json.object { json in
            json.member("id", id)
            json.member("type", "webhook.test")
            json.member("endpoint", endpoint.name)
            json.member("recordedAt", sent)
        }
        do throws(WebhookDeliveryError) {
            let response = try await post(
                json.bytes, id: id, type: "webhook.test", attempt: 1, to: endpoint, at: sent, deadline: ContinuousClock.now + policy.attemptTimeout
            )
            let delivered = (200..<300).contains(response.status)
            return WebhookTestOutcome(eventId: id, isDelivered: delivered, status: response.status, error: delivered ? nil : "HTTP \(response.status)")
        } catch {
            return WebhookTestOutcome(eventId: id, isDelivered: false, status: nil, error: error.description, failure: error)
        }
    }
}

public import Foundation
public import Logging
public import CoreMetrics
public import ServiceLifecycle
public import StoreGateAppStoreClient
public import StoreGateLedger
public import StoreGateWorkers
public import StoreGateCore

/// One webhook endpoint: where the ledger's events are sent, signed with its secret.
public struct WebhookEndpoint: Sendable, Hashable {
    /// A name for logs, metrics and the deliveries API: 1...64 of `A-Z a-z 0-9 . _ -`.
    public var name: String
    /// An `https` URL (or `http`, for a receiver on the same host or network).
    public var url: String
    /// The HMAC secret (at least 16 bytes); never logged.
    public var secret: String
    /// The event types sent; `nil` sends every type.
    public var types: Set<String>?

    /// Validates an endpoint.
    ///
    /// - Throws: ``WebhookConfigurationError`` naming what is wrong.
    public init(name: String, url: String, secret: String, types: Set<String>? = nil) throws(WebhookConfigurationError) {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }) else {
            throw WebhookConfigurationError("a webhook endpoint name has 1...64 characters from A-Z a-z 0-9 . _ -")
        }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["https", "http"].contains(scheme),
              let host = parsed.host, !host.isEmpty, parsed.user == nil, parsed.password == nil
        else {
            throw WebhookConfigurationError("webhook endpoint '\(name)': the URL must be http(s)://host/… without credentials")
        }
        guard secret.utf8.count >= 16 else {
            throw WebhookConfigurationError("webhook endpoint '\(name)': the secret has at least 16 bytes")
        }
        if let types, types.isEmpty {
            throw WebhookConfigurationError("webhook endpoint '\(name)': an empty type filter would send nothing (leave it out to send every type)")
        }
        self.name = name
        self.url = url
        self.secret = secret
        self.types = types
    }
}

extension WebhookEndpoint {
    /// Whether deliveries go over plain HTTP to a host other than this one.
    public var sendsInClearOffHost: Bool {
        guard let parsed = URL(string: url), parsed.scheme?.lowercased() == "http" else { return false }
        return !["127.0.0.1", "localhost", "::1", "[::1]"].contains(parsed.host?.lowercased() ?? "")
    }
}

/// A webhook setting that cannot be used.
public struct WebhookConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

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
/// when the lease ends. Every request carries `StoreGate-Signature` (``WebhookSignature``),
/// `StoreGate-Event-Id`, `StoreGate-Event-Type` and `StoreGate-Delivery-Attempt`.
public final class WebhookDeliveryService: Service, Sendable {
    public let endpoints: [WebhookEndpoint]
    public let policy: WebhookDeliveryPolicy
    /// This deliverer's name in leases.
    public let holder: String
    private let store: any EventDeliveryStore
    private let transport: any HTTPTransport
    private let logger: Logger
    private let metrics: any MetricsFactory
    private let now: @Sendable () -> Date

    public init(
        store: any EventDeliveryStore, endpoints: [WebhookEndpoint], transport: any HTTPTransport, policy: WebhookDeliveryPolicy = WebhookDeliveryPolicy(),
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
    /// `storegate_webhook_deliveries{endpoint,status}` gauge (pending, failed) current.
    public var workers: [any PeriodicWorker] {
        endpoints.map { EndpointWorker(service: self, endpoint: $0) } + [BacklogWorker(service: self)]
    }

    /// Runs the workers until graceful shutdown (without a start gate or health registry; the
    /// server runs ``workers`` with its own).
    public func run() async throws {
        try await PeriodicService.runAll(workers, logger: logger, metrics: metrics, now: now)
    }

    /// Counts the pending and failed deliveries of every endpoint into the gauge, once.
    public func recordBacklog() async throws(LedgerError) {
        let counts = try await store.deliveryCounts(of: [.pending, .failed])
        for endpoint in endpoints {
            for status in [EventDelivery.Status.pending, .failed] {
                Gauge(label: "storegate_webhook_deliveries", dimensions: [("endpoint", endpoint.name), ("status", status.rawValue)], factory: metrics)
                    .record(counts[endpoint.name]?[status] ?? 0)
            }
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

    /// One round for `endpoint`: fans out new events, claims due deliveries and sends them.
    ///
    /// - Returns: How many events were fanned out or sent (0 when there was nothing to do).
    @discardableResult
    public func deliverOnce(_ endpoint: WebhookEndpoint) async throws(LedgerError) -> Int {
        let fanned = try await store.fanOut(endpoint: endpoint.name, types: endpoint.types, limit: maximumEventPage, now: now())
        let lease = policy.attemptTimeout + policy.leaseMargin
        let claimed = try await store.claim(endpoint: endpoint.name, now: now(), limit: policy.batchSize, lease: lease, holder: holder)
        guard !claimed.isEmpty else { return fanned }
        let results = await withTaskGroup(of: (Int64, DeliveryResult).self) { group in
            for delivery in claimed {
                group.addTask { (delivery.event.sequence, await self.attempt(delivery, to: endpoint)) }
            }
            var results: [(Int64, DeliveryResult)] = []
            for await result in group { results.append(result) }
            return results
        }
        try await store.complete(endpoint: endpoint.name, results: results.map { (sequence: $0.0, result: $0.1) }, holder: holder, at: now())
        return fanned + claimed.count
    }

    /// Sends one delivery once.
    func attempt(_ delivery: ClaimedDelivery, to endpoint: WebhookEndpoint) async -> DeliveryResult {
        let event = delivery.event
        let body = EventJSON.encode(event)
        let request = TransportRequest(
            method: "POST", url: endpoint.url,
            headers: [
                .init("Content-Type", "application/json"),
                .init("User-Agent", "StoreGate-Webhooks/1"),
                .init(WebhookSignature.headerName, WebhookSignature.header(body: body, secret: endpoint.secret, at: now())),
                .init("StoreGate-Event-Id", event.id),
                .init("StoreGate-Event-Type", event.type.rawValue),
                .init("StoreGate-Delivery-Attempt", String(delivery.attempts + 1)),
            ],
            body: body
        )
        let started = ContinuousClock.now
        let status: Int?
        let problem: String
        do throws(AppStoreClientError) {
            let response = try await transport.send(request, deadline: started + policy.attemptTimeout)
            if (200..<300).contains(response.status) {
                count(endpoint, "delivered", since: started)
                return .delivered(status: response.status)
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

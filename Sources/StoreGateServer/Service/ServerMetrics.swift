import CoreMetrics
import Foundation
import Metrics
public import Prometheus
import Synchronization

/// The service's Prometheus metrics, served at `GET /metrics`.
///
/// The server's own instruments live in a registry per application:
/// - `storegate_http_requests_total{method,route,status}`
/// - `storegate_http_request_duration_seconds{method,route}` (histogram)
/// - `storegate_verifications_total{kind,outcome}`: kind `app_receipt`, `signed_transaction`,
///   `notification`, `verify_receipt`; outcome `valid`, `invalid`, `refused` (genuine, but the
///   ledger refused it: another account's purchase), `error`
/// - `storegate_verification_duration_seconds{kind}` (histogram)
///
/// The ledger's instruments (`storegate_ledger_*`: records, notifications, consumptions and
/// operation durations by backend) go through the process-wide swift-metrics system, which
/// ``bootstrapProcessMetrics()`` points at ``processRegistry``; `/metrics` serves both.
/// Labels are low-cardinality: route templates, never accounts, products or keys.
public final class ServerMetrics: Sendable {
    /// The registry of the server's own instruments.
    public let registry: PrometheusCollectorRegistry
    private let factory: PrometheusMetricsFactory
    private let requestCounters = Mutex<[String: CoreMetrics.Counter]>([:])
    private let requestTimers = Mutex<[String: CoreMetrics.Timer]>([:])
    private let verificationCounters = Mutex<[String: CoreMetrics.Counter]>([:])
    private let verificationTimers = Mutex<[String: CoreMetrics.Timer]>([:])

    /// Histogram buckets for request and verification durations: 0.25 ms to 10 s.
    static let durationBuckets: [Duration] = [
        .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5),
        .milliseconds(10), .milliseconds(20), .milliseconds(50), .milliseconds(100), .milliseconds(250),
        .milliseconds(500), .seconds(1), .milliseconds(2500), .seconds(10),
    ]

    /// Creates instruments in this application's registry (the App Store sync's).
    var instrumentFactory: any MetricsFactory { factory }

    /// Creates the server's instruments in a fresh registry.
    public init(registry: PrometheusCollectorRegistry = PrometheusCollectorRegistry()) {
        self.registry = registry
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = Self.durationBuckets
        self.factory = factory
    }

    /// Counts a request and records its duration.
    func request(method: String, route: String, status: Int, nanoseconds: UInt64) {
        let counterKey = "\(method) \(route) \(status)"
        let counter = requestCounters.withLock { counters in
            if let existing = counters[counterKey] { return existing }
            let created = CoreMetrics.Counter(label: "storegate_http_requests_total", dimensions: [("method", method), ("route", route), ("status", String(status))], factory: factory)
            counters[counterKey] = created
            return created
        }
        counter.increment()
        let timerKey = "\(method) \(route)"
        let timer = requestTimers.withLock { timers in
            if let existing = timers[timerKey] { return existing }
            let created = CoreMetrics.Timer(label: "storegate_http_request_duration_seconds", dimensions: [("method", method), ("route", route)], factory: factory)
            timers[timerKey] = created
            return created
        }
        timer.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// The outcome of one verification.
    enum Outcome: String {
        case valid, invalid, refused, error
    }

    /// Counts a verification by proof kind and outcome, and records its duration.
    func verification(_ kind: String, _ outcome: Outcome, nanoseconds: UInt64) {
        let key = "\(kind) \(outcome.rawValue)"
        let counter = verificationCounters.withLock { counters in
            if let existing = counters[key] { return existing }
            let created = CoreMetrics.Counter(label: "storegate_verifications_total", dimensions: [("kind", kind), ("outcome", outcome.rawValue)], factory: factory)
            counters[key] = created
            return created
        }
        counter.increment()
        let timer = verificationTimers.withLock { timers in
            if let existing = timers[kind] { return existing }
            let created = CoreMetrics.Timer(label: "storegate_verification_duration_seconds", dimensions: [("kind", kind)], factory: factory)
            timers[kind] = created
            return created
        }
        timer.recordNanoseconds(Int64(clamping: nanoseconds))
    }

    /// The Prometheus text exposition of the server's and the process's instruments.
    func exposition() -> [UInt8] {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(16 << 10)
        registry.emit(into: &buffer)
        if Self.isProcessBootstrapped, Self.processRegistry !== registry {
            Self.processRegistry.emit(into: &buffer)
        }
        return buffer
    }

    // MARK: Process-wide metrics

    /// The registry the process-wide swift-metrics system reports to once
    /// ``bootstrapProcessMetrics()`` ran (the ledger's instruments).
    public static let processRegistry = PrometheusCollectorRegistry()
    private static let bootstrapped = Mutex(false)

    private static var isProcessBootstrapped: Bool { bootstrapped.withLock { $0 } }

    /// Points the process-wide swift-metrics system at ``processRegistry``, once per process
    /// (later calls do nothing). Call it before opening a ledger, whose instruments are
    /// created when it opens.
    public static func bootstrapProcessMetrics() {
        bootstrapped.withLock { done in
            guard !done else { return }
            var factory = PrometheusMetricsFactory(registry: processRegistry)
            factory.defaultDurationHistogramBuckets = durationBuckets
            MetricsSystem.bootstrap(factory)
            done = true
        }
    }
}

public import CoreMetrics
import Dispatch
import StoreGateCore
public import Foundation
public import Logging
public import ServiceLifecycle

/// Runs a ``PeriodicWorker``'s rounds until graceful shutdown: the one loop of every
/// background worker.
///
/// It waits at the ``StartGate`` first, then runs a round, and waits what the round's
/// ``WorkerPace`` asks (nothing, the interval with its jitter, or a given wait) — or, when the
/// round threw, the schedule's backoff for that many consecutive failures (at least until an
/// error's ``WorkerRetryHint/retryAfter``), and tries again.
/// Nothing a round throws ends the loop; a graceful shutdown (or cancellation) ends it between
/// rounds or during a wait, and then ``PeriodicWorker/stop()`` runs.
///
/// Metrics, labelled `worker`:
/// - `storegate_worker_rounds_total{worker,outcome}`: rounds, `ok` or `failed`;
/// - `storegate_worker_round_duration_seconds{worker}`: how long rounds take;
/// - `storegate_worker_lag_seconds{worker}`: seconds since the last completed round, set at
///   every round (alert when it exceeds a few intervals).
public struct PeriodicService: Service {
    private let worker: any PeriodicWorker
    private let gate: StartGate
    private let registry: WorkerRegistry?
    private let logger: Logger?
    private let factory: any MetricsFactory
    private let now: @Sendable () -> Date

    /// Creates the loop of one worker.
    ///
    /// - Parameters:
    ///   - worker: The worker.
    ///   - gate: Rounds start once it opens (default: open).
    ///   - registry: Where the worker's health is reported, if anywhere.
    ///   - logger: Where failed rounds are logged (a warning with the error's description,
    ///     which must never hold a secret or a proof); `nil` logs nothing.
    ///   - metrics: Where the instruments are created.
    ///   - now: The wall clock, for the lag and the registry.
    public init(
        _ worker: any PeriodicWorker, gate: StartGate = .open, registry: WorkerRegistry? = nil, logger: Logger? = nil,
        metrics: any MetricsFactory = MetricsSystem.factory, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.worker = worker
        self.gate = gate
        self.registry = registry
        self.logger = logger
        self.factory = metrics
        self.now = now
    }

    public func run() async throws {
        let name = worker.workerName
        let schedule = worker.schedule
        registry?.waiting(name, schedule: schedule)
        let succeeded = Counter(label: "storegate_worker_rounds_total", dimensions: [("worker", name), ("outcome", "ok")], factory: factory)
        let failed = Counter(label: "storegate_worker_rounds_total", dimensions: [("worker", name), ("outcome", "failed")], factory: factory)
        let duration = Timer(label: "storegate_worker_round_duration_seconds", dimensions: [("worker", name)], factory: factory)
        let lag = Gauge(label: "storegate_worker_lag_seconds", dimensions: [("worker", name)], factory: factory)
        await cancelWhenGracefulShutdown {
            guard await gate.wait() else { return }
            let started = now()
            registry?.started(name, at: started)
            var lastSuccess = started
            var failures = 0
            while !Task.isCancelled {
                lag.record(max(0, now().timeIntervalSince(lastSuccess)))
                let start = DispatchTime.now().uptimeNanoseconds
                let pause: Duration
                do {
                    let pace = try await worker.round()
                    duration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds &- start))
                    failures = 0
                    lastSuccess = now()
                    succeeded.increment()
                    registry?.succeeded(name, at: lastSuccess)
                    lag.record(0)
                    pause = schedule.pause(after: pace)
                } catch {
                    duration.recordNanoseconds(Int64(DispatchTime.now().uptimeNanoseconds &- start))
                    if Task.isCancelled { break }
                    failures += 1
                    failed.increment()
                    let description = String(describing: error)
                    registry?.failed(name, at: now(), error: description)
                    var wait = schedule.backoff.delay(afterFailures: failures)
                    if let hint = error as? any WorkerRetryHint, let retryAfter = hint.retryAfter {
                        let seconds = max(0, retryAfter.timeIntervalSince(now()))
                        wait = max(wait, .milliseconds(Int64((seconds * 1000).rounded(.up))))
                    }
                    pause = wait
                    logger?.warning("a background round failed; trying again after a backoff", metadata: [
                        "worker": "\(name)", "error": "\(description)", "failures": "\(failures)", "retry.seconds": "\(pause.components.seconds)",
                    ])
                }
                if pause > .zero {
                    try? await Task.sleep(for: pause)
                } else {
                    await Task.yield()
                }
            }
        }
        await worker.stop()
    }

    /// Runs the loops of several workers side by side until graceful shutdown.
    public static func runAll(
        _ workers: [any PeriodicWorker], gate: StartGate = .open, registry: WorkerRegistry? = nil, logger: Logger? = nil,
        metrics: any MetricsFactory = MetricsSystem.factory, now: @escaping @Sendable () -> Date = { Date() }
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for worker in workers {
                let service = PeriodicService(worker, gate: gate, registry: registry, logger: logger, metrics: metrics, now: now)
                group.addTask { try await service.run() }
            }
            try await group.waitForAll()
        }
    }
}

/// Several workers run side by side as one service of an application's `ServiceGroup`, behind
/// one start gate, reporting to one registry.
public struct WorkerGroup: Service {
    private let workers: [any PeriodicWorker]
    private let gate: StartGate
    private let registry: WorkerRegistry?
    private let logger: Logger?
    private let factory: any MetricsFactory

    /// Creates the group (see ``PeriodicService/init(_:gate:registry:logger:metrics:now:)``).
    public init(
        _ workers: [any PeriodicWorker], gate: StartGate = .open, registry: WorkerRegistry? = nil, logger: Logger? = nil,
        metrics: any MetricsFactory = MetricsSystem.factory
    ) {
        self.workers = workers
        self.gate = gate
        self.registry = registry
        self.logger = logger
        self.factory = metrics
    }

    public func run() async throws {
        try await PeriodicService.runAll(workers, gate: gate, registry: registry, logger: logger, metrics: factory)
    }
}

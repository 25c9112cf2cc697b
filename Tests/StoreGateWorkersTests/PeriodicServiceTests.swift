import Foundation
import Logging
import MetricsTestKit
import ServiceLifecycle
import StoreGateCore
import StoreGateWorkers
import Synchronization
import Testing

/// A worker whose rounds throw while `failing` is above zero, counting what it was asked.
final class ScriptedWorker: PeriodicWorker {
    let workerName: String
    let schedule: WorkerSchedule
    private let state = Mutex<(rounds: Int, failing: Int, stopped: Bool)>((0, 0, false))
    let pace: WorkerPace

    struct Failure: Error, CustomStringConvertible {
        var description: String { "scripted: the database is down" }
    }

    init(name: String = "scripted", interval: Duration = .milliseconds(20), failing: Int = 0, pace: WorkerPace = .idle, backoff: Backoff? = nil) {
        workerName = name
        schedule = WorkerSchedule(interval: interval, backoff: backoff ?? Backoff(first: .milliseconds(5), maximum: .milliseconds(20)))
        self.pace = pace
        state.withLock { $0.failing = failing }
    }

    var rounds: Int { state.withLock { $0.rounds } }
    var stopped: Bool { state.withLock { $0.stopped } }

    func round() async throws -> WorkerPace {
        let failing = state.withLock { state -> Bool in
            state.rounds += 1
            guard state.failing > 0 else { return false }
            state.failing -= 1
            return true
        }
        if failing { throw Failure() }
        return pace
    }

    func stop() async {
        state.withLock { $0.stopped = true }
    }
}

@Suite("One skeleton for background work")
struct PeriodicServiceTests {
    static func waitUntil(_ condition: () -> Bool, timeout: Duration = .seconds(90)) async throws {
        let deadline = ContinuousClock.now + timeout
        while !condition() {
            guard ContinuousClock.now < deadline else { throw WaitFailure() }
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    struct WaitFailure: Error {}

    @Test("a backoff grows from its first wait to its ceiling, jitter taking up to its share")
    func backoff() {
        let backoff = Backoff(first: .seconds(1), maximum: .seconds(30), multiplier: 2, jitter: 0.5)
        #expect(backoff.baseDelay(afterFailures: 1) == .seconds(1))
        #expect(backoff.baseDelay(afterFailures: 3) == .seconds(4))
        #expect(backoff.baseDelay(afterFailures: 40) == .seconds(30))
        #expect(backoff.delay(afterFailures: 3, random: 0) == .seconds(4))
        #expect(backoff.delay(afterFailures: 3, random: 1) == .seconds(2))
        #expect(Backoff(first: .seconds(-1), maximum: .seconds(1), multiplier: 0.5, jitter: 7) == Backoff(first: .zero, maximum: .seconds(1), multiplier: 1, jitter: 1))
    }

    @Test("a worker whose rounds throw runs again after its backoff, and goes on once they succeed")
    func recovers() async throws {
        let worker = ScriptedWorker(failing: 3)
        let registry = WorkerRegistry()
        let metrics = TestMetrics()
        let service = PeriodicService(worker, registry: registry, metrics: metrics)
        let running = Task { try await service.run() }
        try await Self.waitUntil { worker.rounds >= 6 }
        running.cancel()
        try await running.value
        #expect(worker.stopped)
        let status = try #require(registry.statuses(at: Date()).first)
        #expect(status.name == "scripted")
        #expect(status.failures == 3)
        #expect(status.consecutiveFailures == 0)
        #expect(status.health == .ok)
        #expect(status.lastSuccessAt != nil)
        #expect(try metrics.expectCounter("storegate_worker_rounds_total", [("worker", "scripted"), ("outcome", "failed")]).totalValue == 3)
        #expect(try metrics.expectCounter("storegate_worker_rounds_total", [("worker", "scripted"), ("outcome", "ok")]).totalValue >= 3)
        #expect(try metrics.expectGauge("storegate_worker_lag_seconds", [("worker", "scripted")]).lastValue != nil)
    }

    @Test("nothing runs before the start gate opens; a cancelled wait runs nothing at all")
    func gate() async throws {
        let worker = ScriptedWorker()
        let gate = StartGate()
        let registry = WorkerRegistry()
        let running = Task { try await PeriodicService(worker, gate: gate, registry: registry).run() }
        // The service registers itself as waiting when its task starts, which a loaded machine
        // may not do within any fixed time: wait for that, then give it time to run a round it
        // must not run.
        try await Self.waitUntil { !registry.statuses(at: Date()).isEmpty }
        try await Task.sleep(for: .milliseconds(100))
        #expect(worker.rounds == 0)
        #expect(registry.statuses(at: Date()).map(\.health) == [.waiting])
        gate.open()
        try await Self.waitUntil { worker.rounds >= 2 }
        running.cancel()
        try await running.value

        let idle = ScriptedWorker()
        let closed = StartGate()
        let cancelled = Task { try await PeriodicService(idle, gate: closed).run() }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        try await cancelled.value
        #expect(idle.rounds == 0)
        #expect(!closed.isOpen)
        closed.open()
        closed.open()
        #expect(await closed.wait())
    }

    @Test("a worker without a completed round past its stall limit is reported stalled, with its last error")
    func stalled() async throws {
        let worker = ScriptedWorker(name: "always-failing", interval: .milliseconds(10), failing: .max)
        let registry = WorkerRegistry()
        let running = Task { try await PeriodicService(worker, registry: registry).run() }
        // The registry, not the worker's count: a round counts itself when it starts, and a
        // failure that ends in cancellation is not recorded as one.
        try await Self.waitUntil { (registry.statuses(at: Date()).first?.consecutiveFailures ?? 0) >= 3 }
        running.cancel()
        try await running.value
        let later = Date().addingTimeInterval(3600)
        let status = try #require(registry.statuses(at: later).first)
        #expect(status.health == .stalled)
        #expect(status.lastError == "scripted: the database is down")
        #expect(status.consecutiveFailures >= 3)
        let started = try #require(status.startedAt)
        #expect(try #require(registry.statuses(at: started.addingTimeInterval(10)).first).health == .ok)  // within 30 s of its start
    }

    @Test("a round's pace decides the wait: again at once, the interval with its jitter, or the given wait")
    func pace() {
        let schedule = WorkerSchedule(interval: .seconds(10), jitter: 0.1)
        #expect(schedule.pause(after: .again) == .zero)
        #expect(schedule.pause(after: .idle, random: 0) == .seconds(10))
        #expect(schedule.pause(after: .idle, random: 1) == .seconds(11))
        #expect(schedule.pause(after: .after(.seconds(3))) == .seconds(3))
        #expect(schedule.stallAfter == .seconds(30))
        #expect(WorkerSchedule(interval: .seconds(600)).stallAfter == .seconds(1800))
    }

    @Test("a round that throws an error with Retry-After waits at least until then")
    func retryAfter() async throws {
        struct Limited: WorkerRetryHint, Error { let retryAfter: Date? }
        final class Once: PeriodicWorker {
            let workerName = "limited"
            let schedule = WorkerSchedule(interval: .milliseconds(1), backoff: Backoff(first: .milliseconds(1), maximum: .milliseconds(1)))
            let rounds = Mutex(0)
            func round() async throws -> WorkerPace {
                let count = rounds.withLock { $0 += 1; return $0 }
                if count == 1 { throw Limited(retryAfter: Date().addingTimeInterval(0.4)) }
                return .idle
            }
        }
        let worker = Once()
        let start = ContinuousClock.now
        let running = Task { try await PeriodicService(worker).run() }
        try await Self.waitUntil { worker.rounds.withLock { $0 } >= 2 }
        #expect(ContinuousClock.now - start >= .milliseconds(350))
        running.cancel()
        try await running.value
    }
}

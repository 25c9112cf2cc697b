public import StoreGateCore
public import ServiceLifecycle

/// A background job that works in rounds: the subscription clock, event retention, webhook
/// deliveries, the App Store sync, the first-sight refresh, the consumption answers.
///
/// A worker says what one round does and when the next is due (``WorkerSchedule``);
/// ``PeriodicService`` runs the rounds: at once when a round says more work waits, after the
/// interval when it found none, after a backoff when it threw. A round that throws is counted
/// and logged, and the next one runs as if nothing happened: no error stops a worker for good
/// while the process lives. Every worker reports the same metrics (rounds, failures, lag) and
/// its health (``WorkerRegistry``).
///
/// A worker is a `Service` too: run on its own (in a test, say) it runs under a
/// ``PeriodicService`` without a start gate or registry.
public protocol PeriodicWorker: Service {
    /// The worker's name in metrics, logs and the readiness report: a low-cardinality label
    /// such as `subscription_clock` or `webhooks/orders` (one per configured thing, never
    /// per request).
    var workerName: String { get }

    /// When rounds run.
    var schedule: WorkerSchedule { get }

    /// One round of work.
    ///
    /// - Returns: When the next round is due.
    /// - Throws: Anything: the round counts as failed, and the next one runs after the
    ///   schedule's backoff.
    func round() async throws -> WorkerPace

    /// Called once when the worker stops (a graceful shutdown): release leases.
    func stop() async
}

extension PeriodicWorker {
    public func stop() async {}

    /// Runs the worker's rounds until graceful shutdown, without a start gate or registry.
    public func run() async throws {
        try await PeriodicService(self).run()
    }
}

/// What a round says about the next one.
public enum WorkerPace: Sendable, Hashable {
    /// More work waits: the next round runs at once.
    case again
    /// Nothing more to do now: the next round runs after the schedule's interval.
    case idle
    /// The next round runs after this wait (Apple's `Retry-After`, a known due time).
    case after(Duration)
}

/// When a worker's rounds run.
public struct WorkerSchedule: Sendable, Hashable {
    /// The wait after a round that found nothing more to do.
    public var interval: Duration
    /// A share of ``interval`` added at random (0...1), so instances started together do not
    /// all work at the same moment.
    public var jitter: Double
    /// The wait after consecutive failed rounds.
    public var backoff: Backoff
    /// How long the worker may go without a completed round before it is reported stalled;
    /// by default three intervals or three backoff ceilings, whichever is longer, and at
    /// least 30 seconds.
    public var stallAfter: Duration

    /// Creates a schedule.
    ///
    /// - Parameters:
    ///   - interval: The wait after an idle round.
    ///   - jitter: A share of the interval added at random.
    ///   - backoff: The waits after failed rounds (default: 1 s doubling to the interval,
    ///     at most 5 minutes).
    ///   - stallAfter: When a worker without a completed round is reported stalled.
    public init(interval: Duration, jitter: Double = 0, backoff: Backoff? = nil, stallAfter: Duration? = nil) {
        self.interval = max(.zero, interval)
        self.jitter = min(1, max(0, jitter))
        let backoff = backoff ?? Backoff(first: min(.seconds(1), interval), maximum: max(min(interval, .seconds(300)), .milliseconds(1)))
        self.backoff = backoff
        self.stallAfter = stallAfter ?? max(.seconds(30), interval * 3, backoff.maximum * 3)
    }

    /// The wait a round's pace asks for.
    ///
    /// - Parameter random: A value in 0...1 for the interval's jitter.
    public func pause(after pace: WorkerPace, random: Double = Double.random(in: 0...1)) -> Duration {
        switch pace {
        case .again: .zero
        case .idle: interval * (1 + jitter * min(1, max(0, random)))
        case .after(let wait): max(.zero, wait)
        }
    }
}

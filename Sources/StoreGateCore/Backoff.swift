/// How long to wait after consecutive failures: exponential growth from a first wait to a
/// ceiling, with a share of each wait drawn at random so that many clients failing together
/// do not try again together.
///
/// The one backoff of StoreGate: calls to Apple (`RetryPolicy`), webhook retries, the
/// consumption answers' retries and every background worker's pause after a failed round use
/// it, each with its own values.
///
/// ```swift
/// let backoff = Backoff(first: .seconds(1), maximum: .seconds(30))
/// backoff.baseDelay(afterFailures: 1)            // 1 s
/// backoff.baseDelay(afterFailures: 3)            // 4 s
/// backoff.delay(afterFailures: 3, random: 1)     // 2 s (jitter 0.5 removes up to half)
/// backoff.delay(afterFailures: 3)                // 2...4 s, at random
/// ```
public struct Backoff: Sendable, Hashable {
    /// The wait after the first failure.
    public var first: Duration
    /// The longest wait.
    public var maximum: Duration
    /// How much each wait grows over the previous one (at least 1).
    public var multiplier: Double
    /// The share of a wait drawn at random, 0 (none) to 1 ("full jitter").
    public var jitter: Double

    /// Creates a backoff; values out of range are clamped (waits at least zero, a multiplier
    /// at least 1, a jitter within 0...1).
    public init(first: Duration, maximum: Duration, multiplier: Double = 2, jitter: Double = 0.5) {
        self.first = max(.zero, first)
        self.maximum = max(.zero, maximum)
        self.multiplier = max(1, multiplier)
        self.jitter = min(1, max(0, jitter))
    }

    /// The wait after `failures` consecutive failures (1 for the first), before jitter:
    /// `first × multiplier^(failures − 1)`, at most ``maximum``.
    public func baseDelay(afterFailures failures: Int) -> Duration {
        var delay = first
        var step = 1
        while step < failures, delay < maximum {
            delay = delay * multiplier
            step += 1
        }
        return min(delay, maximum)
    }

    /// The wait after `failures` consecutive failures with jitter: the wait less
    /// `jitter × random` of it, where `random` is a value in 0...1 (drawn uniformly by default).
    public func delay(afterFailures failures: Int, random: Double = Double.random(in: 0...1)) -> Duration {
        baseDelay(afterFailures: failures) * (1 - jitter * min(1, max(0, random)))
    }
}

public import StoreGateCore

/// How a call to Apple retries: a bounded number of attempts, exponential backoff with
/// jitter between them, and one deadline for the whole call.
///
/// Only failures whose ``AppStoreClientError/isRetryable`` is `true` are retried (no answer,
/// HTTP 429, Apple's retryable error codes, a 5xx without a documented non-retryable code,
/// verifyReceipt's temporary statuses; that property lists them exactly). A wait that would end
/// past the deadline is not started: the call fails with
/// ``AppStoreClientError/Code/deadlineExceeded`` instead. An HTTP 429 waits until its
/// `Retry-After` time when that is sooner than ``maxRetryAfter``, and fails at once otherwise.
public struct RetryPolicy: Sendable, Hashable {
    /// Attempts in total, the first one included (1 disables retries).
    public var maxAttempts: Int
    /// The waits between attempts: the first after attempt 1, growing to a ceiling, with jitter.
    public var backoff: Backoff
    /// How long one attempt may take.
    public var attemptTimeout: Duration
    /// How long the whole call may take, retries and waits included.
    public var totalDeadline: Duration
    /// The longest `Retry-After` wait honoured; a later one fails the call at once.
    public var maxRetryAfter: Duration

    /// Creates a value from its parts.
    public init(
        maxAttempts: Int = 3,
        initialBackoff: Duration = .milliseconds(250),
        maxBackoff: Duration = .seconds(4),
        multiplier: Double = 2,
        jitter: Double = 0.5,
        attemptTimeout: Duration = .seconds(15),
        totalDeadline: Duration = .seconds(45),
        maxRetryAfter: Duration = .seconds(30)
    ) {
        self.maxAttempts = max(1, maxAttempts)
        self.backoff = Backoff(first: initialBackoff, maximum: maxBackoff, multiplier: multiplier, jitter: jitter)
        self.attemptTimeout = max(.zero, attemptTimeout)
        self.totalDeadline = max(.zero, totalDeadline)
        self.maxRetryAfter = max(.zero, maxRetryAfter)
    }

    /// The defaults: 3 attempts, 250 ms doubling to at most 4 s with 50 % jitter, 15 s per
    /// attempt, 45 s per call, `Retry-After` honoured up to 30 s.
    public static let `default` = RetryPolicy()

    /// One attempt, no retry.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The wait after failed attempt number `attempt` (1-based), before jitter.
    public func backoff(afterAttempt attempt: Int) -> Duration {
        backoff.baseDelay(afterFailures: attempt)
    }

    /// The wait after failed attempt `attempt`, with jitter drawn from `random` (a value in 0...1).
    public func jitteredBackoff(afterAttempt attempt: Int, random: Double) -> Duration {
        backoff.delay(afterFailures: attempt, random: random)
    }
}

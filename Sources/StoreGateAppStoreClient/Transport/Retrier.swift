import Foundation
import Logging

/// Runs one logical call under a ``RetryPolicy``: attempts, backoff, `Retry-After`, deadline.
struct Retrier: Sendable {
    let policy: RetryPolicy
    let logger: Logger
    /// The wall clock, for `Retry-After` times (Apple sends UNIX milliseconds).
    let now: @Sendable () -> Date

    /// The deadline of a call that starts now.
    func callDeadline() -> ContinuousClock.Instant {
        ContinuousClock.now + policy.totalDeadline
    }

    /// Runs `operation` until it succeeds, fails with a non-retryable error, runs out of
    /// attempts or `callDeadline` would pass. `operation` gets the attempt number (1-based)
    /// and the deadline of that attempt.
    func run<T: Sendable>(
        until callDeadline: ContinuousClock.Instant,
        _ operation: (Int, ContinuousClock.Instant) async throws(AppStoreClientError) -> T
    ) async throws(AppStoreClientError) -> (value: T, attempts: Int) {
        let clock = ContinuousClock()
        var attempt = 0
        while true {
            attempt += 1
            if Task.isCancelled {
                throw AppStoreClientError(.cancelled, reason: "the call was cancelled", attempts: attempt - 1)
            }
            let start = clock.now
            guard start < callDeadline else {
                throw AppStoreClientError(.deadlineExceeded, reason: "the call's deadline of \(policy.totalDeadline) passed", attempts: attempt - 1)
            }
            let attemptDeadline = min(callDeadline, start + policy.attemptTimeout)
            let failure: AppStoreClientError
            do {
                return (try await operation(attempt, attemptDeadline), attempt)
            } catch {
                failure = error
            }
            if failure.code == .timedOut, clock.now >= callDeadline {
                throw AppStoreClientError(.deadlineExceeded, reason: "the call's deadline of \(policy.totalDeadline) passed during attempt \(attempt)", attempts: attempt)
            }
            guard failure.isRetryable else { throw failure.with(attempts: attempt) }
            guard attempt < policy.maxAttempts else {
                logger.debug("appstore call gave up", metadata: ["attempts": "\(attempt)", "code": "\(failure.code)"])
                throw failure.with(attempts: attempt)
            }
            let delay: Duration
            if let retryAfter = failure.retryAfter {
                let wait = max(0, retryAfter.timeIntervalSince(now()))
                let waitDuration = Duration.milliseconds(Int64((wait * 1000).rounded(.up)))
                guard waitDuration <= policy.maxRetryAfter else {
                    throw failure.with(attempts: attempt)
                }
                delay = waitDuration
            } else {
                delay = policy.jitteredBackoff(afterAttempt: attempt, random: Double.random(in: 0...1))
            }
            guard clock.now + delay < callDeadline else {
                var error = AppStoreClientError(
                    .deadlineExceeded,
                    reason: "waiting \(delay) before attempt \(attempt + 1) would pass the call's deadline (last failure: \(failure.code))",
                    attempts: attempt
                )
                error.status = failure.status
                error.apiError = failure.apiError
                error.httpStatus = failure.httpStatus
                error.retryAfter = failure.retryAfter
                error.environment = failure.environment
                throw error
            }
            logger.debug("appstore call retrying", metadata: ["attempt": "\(attempt)", "code": "\(failure.code)", "delay": "\(delay)"])
            do {
                try await Task.sleep(for: delay)
            } catch {
                throw AppStoreClientError(.cancelled, reason: "the call was cancelled while waiting to retry", attempts: attempt)
            }
        }
    }
}

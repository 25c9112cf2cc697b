public import Foundation

/// An error that knows when trying again makes sense (Apple's `Retry-After`): a round that
/// throws one waits at least until then, however short its backoff.
public protocol WorkerRetryHint: Error {
    /// When to try again, if known.
    var retryAfter: Date? { get }
}

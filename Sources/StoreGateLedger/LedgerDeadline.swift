import Synchronization

/// Runs `body` in a task of its own and answers within `timeout`, whether or not `body` has
/// finished: a database that does not answer (a PostgreSQL server that is down, a connection
/// pool waiting for a connection that never comes) turns into a retryable
/// ``LedgerError/Code/storage`` error after `timeout`, so a request can answer 503 at once
/// instead of hanging. `body` is then cancelled; what it had already sent to the database may
/// still complete, as with any timeout — callers see an error, never a success, and every
/// ledger write is idempotent when retried.
///
/// - Parameters:
///   - timeout: The longest the caller waits.
///   - body: The database work.
/// - Throws: `body`'s error, or a retryable storage error after `timeout`.
public func withLedgerDeadline<T: Sendable>(
    _ timeout: Duration,
    _ body: @escaping @Sendable () async throws(LedgerError) -> T
) async throws(LedgerError) -> T {
    let race = DeadlineRace<T>()
    let result = await withTaskCancellationHandler {
        await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, LedgerError>, Never>) in
            race.start(continuation)
            let work = Task {
                do throws(LedgerError) {
                    race.finish(.success(try await body()))
                } catch {
                    race.finish(.failure(error))
                }
            }
            let timer = Task {
                do {
                    try await Task.sleep(for: timeout)
                } catch {
                    return  // the work finished first and cancelled the timer
                }
                race.finish(.failure(LedgerError(.storage, reason: "the database did not answer within \(timeout)", isRetryable: true)))
            }
            race.attach(work: work, timer: timer)
        }
    } onCancel: {
        race.finish(.failure(LedgerError(.storage, reason: "the database call was cancelled", isRetryable: true)))
    }
    return try result.get()
}

/// The first of work, timer and cancellation to finish resumes the caller; the others are
/// cancelled.
private final class DeadlineRace<T: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result<T, LedgerError>, Never>?
        var result: Result<T, LedgerError>?
        var isResumed = false
        var work: Task<Void, Never>?
        var timer: Task<Void, Never>?
    }

    private let state = Mutex(State())

    func start(_ continuation: CheckedContinuation<Result<T, LedgerError>, Never>) {
        let early = state.withLock { state -> Result<T, LedgerError>? in
            guard let result = state.result else {
                state.continuation = continuation
                return nil
            }
            state.isResumed = true
            return result
        }
        if let early { continuation.resume(returning: early) }
    }

    func attach(work: Task<Void, Never>, timer: Task<Void, Never>) {
        let finished = state.withLock { state -> Bool in
            if state.result != nil { return true }
            state.work = work
            state.timer = timer
            return false
        }
        if finished {
            work.cancel()
            timer.cancel()
        }
    }

    func finish(_ result: Result<T, LedgerError>) {
        let (continuation, work, timer) = state.withLock { state -> (CheckedContinuation<Result<T, LedgerError>, Never>?, Task<Void, Never>?, Task<Void, Never>?) in
            guard state.result == nil else { return (nil, nil, nil) }
            state.result = result
            let continuation = state.isResumed ? nil : state.continuation
            if continuation != nil { state.isResumed = true }
            state.continuation = nil
            defer { state.work = nil; state.timer = nil }
            return (continuation, state.work, state.timer)
        }
        continuation?.resume(returning: result)
        work?.cancel()
        timer?.cancel()
    }
}

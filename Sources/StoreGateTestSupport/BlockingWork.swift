import Foundation

/// Runs blocking work — waiting for a child process, starting a PostgreSQL server — on a
/// thread of its own and suspends until it ends.
///
/// Swift's cooperative pool has one thread per core: two on the CI machine. A test that
/// blocks one of them in `waitpid` for the seconds `initdb` takes halves the pool for
/// every other test running in parallel, and two such tests stall it; timing-sensitive
/// tests elsewhere (deadlines, read timeouts) then fail for reasons of their own.
///
/// - Parameter body: The blocking work.
/// - Returns: What `body` returns.
/// - Throws: What `body` throws.
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
        let thread = Thread {
            continuation.resume(with: Result { try body() })
        }
        thread.start()
    }
}

import Dispatch
import Synchronization

/// Runs async work to completion from libFuzzer's synchronous callback.
///
/// The callback runs on libFuzzer's own thread, never on the concurrency pool, so waiting on a
/// semaphore there cannot starve the pool that runs `operation`.
public func runBlocking<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
    let semaphore = DispatchSemaphore(value: 0)
    let result = Mutex<T?>(nil)
    Task {
        let value = await operation()
        result.withLock { $0 = value }
        semaphore.signal()
    }
    semaphore.wait()
    guard let value = result.withLock({ $0 }) else {
        FuzzTarget.fail("an async operation finished without a result")
    }
    return value
}

import Synchronization

/// Bounds how many test servers (Apple stand-ins, webhook receivers) one test process runs
/// at once.
///
/// Swift Testing starts every test at once; parameterized stand-in tests then held 280
/// listening sockets and 250 loopback connections together, 1,400 descriptors in all. Past
/// about 1,300 open descriptors, Foundation's `Process.run()` on Linux reads past the end of
/// its `/proc/self/fd` directory buffer (it copies each entry's whole 256-byte name) and the
/// test process dies with a segmentation fault in `memmove` — as CI did. A test waits here for
/// a slot instead; a server started inside another's `body` (a stand-in inside a receiver)
/// shares its slot, so nesting can never wait on itself.
public enum TestServerSlots {
    /// How many servers may run at once.
    public static let limit = 24

    @TaskLocal private static var holding = false
    private static let state = Mutex<(free: Int, waiting: [CheckedContinuation<Void, Never>])>((limit, []))

    /// Runs `body` holding a slot (or the slot the current task already holds).
    public static func withSlot<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        if holding { return try await body() }
        await acquire()
        defer { release() }
        return try await $holding.withValue(true) { try await body() }
    }

    private static func acquire() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let granted = state.withLock { state -> Bool in
                if state.free > 0 {
                    state.free -= 1
                    return true
                }
                state.waiting.append(continuation)
                return false
            }
            if granted { continuation.resume() }
        }
    }

    private static func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiting.isEmpty {
                state.free += 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume()
    }
}

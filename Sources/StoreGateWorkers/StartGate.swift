import Synchronization

/// Holds background work until the application is ready for it: the service's workers wait
/// at the gate until the ledger is migrated and reachable, so no worker runs against a
/// database whose schema does not exist yet (a fresh PostgreSQL database).
///
/// Opened once; opening it again does nothing. A waiter cancelled before it opens returns
/// `false`.
public final class StartGate: Sendable {
    private struct State {
        var isOpen = false
        var waiters: [Int: CheckedContinuation<Bool, Never>] = [:]
        var nextWaiter = 0
    }

    private let state: Mutex<State>

    /// Creates a gate, closed unless `isOpen`.
    public init(isOpen: Bool = false) {
        state = Mutex(State(isOpen: isOpen))
    }

    /// A gate that is open from the start (a worker run on its own).
    public static var open: StartGate { StartGate(isOpen: true) }

    /// Whether the gate has opened.
    public var isOpen: Bool { state.withLock { $0.isOpen } }

    /// Opens the gate: every waiter goes on.
    public func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            guard !state.isOpen else { return [] }
            state.isOpen = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Waits until the gate opens.
    ///
    /// - Returns: `true` once it is open, `false` when the task was cancelled first.
    public func wait() async -> Bool {
        let id = state.withLock { state -> Int? in
            guard !state.isOpen else { return nil }
            state.nextWaiter += 1
            return state.nextWaiter
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow: Bool? = state.withLock { state in
                    if state.isOpen { return true }
                    if Task.isCancelled { return false }
                    state.waiters[id] = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(returning: resumeNow) }
            }
        } onCancel: {
            let waiter = state.withLock { $0.waiters.removeValue(forKey: id) }
            waiter?.resume(returning: false)
        }
    }
}

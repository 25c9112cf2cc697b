import Foundation
import StoreGateLedger
import Synchronization

/// Moves WAL checkpoints off the commit path: a background thread with its own connection
/// runs `PRAGMA wal_checkpoint(PASSIVE)` after writes, so a commit never waits for the
/// checkpoint's fsyncs (with SQLite's automatic checkpoints, every thousandth commit did).
///
/// `PASSIVE` never blocks writers or readers. The writer keeps a high automatic-checkpoint
/// threshold as a fallback, so the WAL stays bounded even if this thread falls behind.
final class SQLiteCheckpointer: Sendable {
    /// How often the thread looks for new commits.
    static let interval = DispatchTimeInterval.milliseconds(50)

    private let commits = Atomic<Int>(0)
    private let isStopped = Atomic<Bool>(false)
    private let isStarted = Atomic<Bool>(false)
    /// Signalled to wake the thread early (on stop).
    private let wake = DispatchSemaphore(value: 0)
    /// Signalled by the thread when it has finished.
    private let done = DispatchSemaphore(value: 0)
    private let path: String
    private let busyTimeoutMilliseconds: Int32

    init(path: String, busyTimeoutMilliseconds: Int32) {
        self.path = path
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
    }

    /// Starts the background thread.
    func start() {
        isStarted.store(true, ordering: .releasing)
        let thread = Thread { [self] in self.loop() }
        thread.name = "storegate-sqlite-checkpoint"
        thread.start()
    }

    /// Notes a commit.
    func committed() {
        commits.add(1, ordering: .relaxed)
    }

    /// Makes the thread run a last checkpoint and stop, and waits until it has (so the
    /// files can be deleted or reopened right after).
    func stop() {
        guard isStarted.load(ordering: .acquiring), !isStopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        wake.signal()
        done.wait()
    }

    private func loop() {
        var connection: SQLiteConnection?
        var checkpointed = 0
        while true {
            let stopping = isStopped.load(ordering: .acquiring)
            let seen = commits.load(ordering: .relaxed)
            if seen != checkpointed {
                do {
                    if connection == nil {
                        connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: busyTimeoutMilliseconds)
                    }
                    try connection?.execute("PRAGMA wal_checkpoint(PASSIVE)")
                    checkpointed = seen
                } catch {
                    // A failed passive checkpoint loses nothing: the WAL keeps the data and the
                    // next round (or SQLite's automatic checkpoint) tries again.
                }
            }
            if stopping { break }
            _ = wake.wait(timeout: .now() + Self.interval)
        }
        connection?.close()
        done.signal()
    }
}

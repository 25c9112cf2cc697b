import Foundation
import StoreGateLedger
import Synchronization

/// Moves WAL checkpoints off the commit path: a background thread with its own connection
/// runs `PRAGMA wal_checkpoint(PASSIVE)` after writes, so a commit never waits for the
/// checkpoint's fsyncs (with SQLite's automatic checkpoints, every thousandth commit did).
///
/// `PASSIVE` never blocks writers or readers, and so never makes the log start over while
/// readers keep using it — as planning reads always do under load. The writer therefore
/// restarts the log itself between batches once it holds ``restartFrames`` frames
/// (``restartLogIfLong(_:every:busyTimeoutMilliseconds:)``), and runs no automatic checkpoint: with
/// one (at 20,000 frames), a log that could not start over made every commit past that size
/// checkpoint on the writer's thread, fsync included — 5.6 % of the writer's time in a
/// profile of `bench write-costs`.
final class SQLiteCheckpointer: Sendable {
    /// The log's size at which the writer restarts it: 64 MiB of 4 KiB pages, the size SQLite
    /// truncates the log file to when it starts over (`journal_size_limit`).
    static let restartFrames = 16_384
    /// How long a restart waits for readers and the checkpointer before giving up (it then
    /// tries again another ``restartFrames`` frames later).
    static let restartWaitMilliseconds: Int32 = 100

    /// Restarts the WAL when it holds at least the connection's next restart frame count (on
    /// the writer's thread, between batches, outside any transaction): every frame is copied
    /// into the database and the readers still on the log finish (milliseconds: planning reads),
    /// then the next commit writes the log from its start. A failed attempt (a long read holds
    /// the log) tries again another `every` frames later, so a writer never waits on it more
    /// than once per that much logged.
    static func restartLogIfLong(_ connection: SQLiteConnection, every restartFrames: Int, busyTimeoutMilliseconds: Int32) {
        guard let frames = connection.walIndexVersion()?.lastFrame, Int(frames) >= connection.nextLogRestart else { return }
        let restarted = (try? connection.restartWriteAheadLog(waitingAtMost: restartWaitMilliseconds, thenWaiting: busyTimeoutMilliseconds)) ?? false
        connection.nextLogRestart = restarted ? restartFrames : Int(frames) + restartFrames
    }

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

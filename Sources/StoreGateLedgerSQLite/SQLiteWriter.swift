import Foundation
import StoreGateLedger
import Synchronization

/// The one thread that writes the SQLite file.
///
/// Every write of the ledger is a job on this thread, never on Swift's cooperative pool: a
/// write may wait up to the busy timeout for another process's lock (`BEGIN IMMEDIATE`), and
/// a pool thread blocked that long on a two-core machine stalls every request. Callers await
/// their job's result.
///
/// Jobs that queue up while a transaction runs are committed together (group commit): the
/// thread takes every waiting job, runs each inside its own `SAVEPOINT` of one `BEGIN
/// IMMEDIATE … COMMIT`, and answers each only after the `COMMIT`. A job that fails rolls back
/// to its savepoint alone — the others are unaffected — and a failed `COMMIT` fails every job
/// of the batch. Each job sees the writes of the jobs before it, so the batch is exactly the
/// jobs run one after another.
///
/// Between batches the thread runs the owner's `maintenance` (outside any transaction; it opens
/// its own when it has work, as the timeline index does).
final class SQLiteWriter: Sendable {
    /// A write waiting for the thread: `run` executes it and says whether it failed (its
    /// result kept for `finish`); `finish` answers the caller exactly once, with the error
    /// that ended the job's transaction or savepoint, if any.
    private struct Job {
        let run: @Sendable (SQLiteConnection) -> Bool
        let finish: @Sendable (LedgerError?) -> Void
        /// Runs in a transaction of its own, never batched with other jobs (``write(alone:_:)``).
        let alone: Bool
    }

    private struct Queue: ~Copyable {
        var jobs: [Job] = []
        var isClosed = false
    }

    /// The most jobs one transaction takes, so a long queue still commits in steps.
    static let maximumBatch = 64

    private let queue = Mutex(Queue())
    /// Jobs accepted and not yet answered: waiting, or in the transaction that runs.
    private let outstanding = Atomic<Int>(0)
    private let signal = NSCondition()
    private let done = DispatchSemaphore(value: 0)
    /// Called after each commit (the checkpointer counts them).
    private let onCommit: @Sendable () -> Void
    /// Called on the thread after each batch, outside any transaction.
    private let maintenance: @Sendable (SQLiteConnection) -> Void
    /// Called inside a group commit's transaction after its last job, before the commit:
    /// writes what the jobs staged on the connection (``SQLiteConnection/stagedRollupChanges``).
    private let beforeCommit: @Sendable (SQLiteConnection) throws(LedgerError) -> Void
    /// Owned by the thread alone once it started.
    private let connection: SQLiteConnection

    /// Starts the writer thread on `connection`, which it owns from now on.
    init(
        connection: SQLiteConnection, onCommit: @escaping @Sendable () -> Void,
        beforeCommit: @escaping @Sendable (SQLiteConnection) throws(LedgerError) -> Void = { _ throws(LedgerError) in },
        maintenance: @escaping @Sendable (SQLiteConnection) -> Void = { _ in }
    ) {
        self.connection = connection
        self.onCommit = onCommit
        self.beforeCommit = beforeCommit
        self.maintenance = maintenance
        let thread = Thread { [self] in self.loop() }
        thread.name = "storegate-sqlite-writer"
        thread.start()
    }

    /// Runs `body` in a write transaction on the writer thread and returns its result once
    /// the transaction committed.
    ///
    /// `alone` keeps the job out of group commit: its transaction holds it alone, so it runs
    /// without the `SAVEPOINT` a batched job gets. What that is for: a long job (a bulk
    /// call's thousands of facts) that opens savepoints and statements of its own. Under a
    /// job's savepoint SQLite's in-memory sub-journal keeps every page the job changed, and
    /// each inner savepoint or statement journal released truncates it by walking it from its
    /// first chunk (`memjrnlTruncate`): the cost grows with the square of the job. Measured on
    /// a release bulk build of 10^5 transactions, two bulk writers (so their calls were
    /// batched): 52 % of the build's CPU in that walk.
    ///
    /// - Throws: `body`'s error (nothing it wrote is kept), a storage error when the commit
    ///   fails, or ``LedgerError/Code/closed``.
    func write<T: Sendable>(alone: Bool = false, _ body: @escaping @Sendable (SQLiteConnection) throws(LedgerError) -> T) async throws(LedgerError) -> T {
        let result: Result<T, LedgerError> = await withCheckedContinuation { continuation in
            let outcome = Mutex<Result<T, LedgerError>?>(nil)
            let job = Job(
                run: { connection in
                    let result: Result<T, LedgerError>
                    do throws(LedgerError) {
                        result = .success(try body(connection))
                    } catch {
                        result = .failure(error)
                    }
                    outcome.withLock { $0 = result }
                    if case .failure = result { return true }
                    return false
                },
                finish: { commitError in
                    self.outstanding.subtract(1, ordering: .relaxed)
                    let result = outcome.withLock { stored -> Result<T, LedgerError> in
                        if let commitError { return .failure(commitError) }
                        return stored ?? .failure(LedgerError(.storage, reason: "the write did not run"))
                    }
                    continuation.resume(returning: result)
                },
                alone: alone
            )
            let accepted = queue.withLock { queue -> Bool in
                guard !queue.isClosed else { return false }
                outstanding.add(1, ordering: .relaxed)
                queue.jobs.append(job)
                return true
            }
            if accepted {
                signal.lock()
                signal.signal()
                signal.unlock()
            } else {
                continuation.resume(returning: .failure(LedgerError(.closed, reason: "the ledger is closed")))
            }
        }
        return try result.get()
    }

    /// Whether a write is waiting or running: a job queued now waits for others first.
    var isBusy: Bool { outstandingJobs > 0 }

    /// The writes waiting or running (tests hold the thread until the ones they queued wait).
    var outstandingJobs: Int { outstanding.load(ordering: .relaxed) }

    /// Lets the queued jobs finish, stops the thread and closes the connection.
    func close() {
        let first = queue.withLock { queue -> Bool in
            defer { queue.isClosed = true }
            return !queue.isClosed
        }
        guard first else { return }
        signal.lock()
        signal.signal()
        signal.unlock()
        done.wait()
    }

    private func loop() {
        while true {
            let (batch, isClosed) = nextBatch()
            if batch.isEmpty {
                if isClosed { break }
                continue
            }
            run(batch)
            maintenance(connection)
        }
        connection.close()
        done.signal()
    }

    /// How long the thread looks for the next job before it sleeps: a caller writing again
    /// right after its answer (a sequential writer) then finds the thread awake, instead of
    /// paying a thread wake-up per write.
    static let lingering: Duration = .microseconds(60)

    /// Waits for jobs (or closing) and takes up to ``maximumBatch`` of them: a job that runs
    /// alone is taken by itself, and ends the batch before it.
    private func nextBatch() -> ([Job], Bool) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: Self.lingering)
        while clock.now < deadline {
            let waiting = queue.withLock { !$0.jobs.isEmpty || $0.isClosed }
            if waiting { break }
            sched_yield()
        }
        signal.lock()
        defer { signal.unlock() }
        while true {
            let (batch, isClosed) = queue.withLock { queue -> ([Job], Bool) in
                var count = min(queue.jobs.count, Self.maximumBatch)
                if let first = queue.jobs.prefix(count).firstIndex(where: \.alone) { count = max(first, 1) }
                let batch = Array(queue.jobs.prefix(count))
                queue.jobs.removeFirst(count)
                return (batch, queue.isClosed)
            }
            if !batch.isEmpty || isClosed { return (batch, isClosed) }
            signal.wait()
        }
    }

    /// One transaction for the batch, a savepoint per job (a lone job needs none: its
    /// transaction is its own). The transaction statements are prepared once and reused.
    ///
    /// The jobs of a batch stage their rollup changes on the connection, and `beforeCommit`
    /// queues them as one row: a job rolled back to its savepoint takes its staged changes
    /// back with it.
    ///
    /// After some errors (a full disk, an I/O error) SQLite rolls the whole transaction back by
    /// itself: then the jobs before the failing one lost their writes too and the ones after it
    /// must not run outside a transaction, so all of them fail with a retryable error.
    private func run(_ batch: [Job]) {
        do throws(LedgerError) {
            try connection.run("BEGIN IMMEDIATE")
        } catch {
            for job in batch { job.finish(error) }
            return
        }
        if batch.count == 1 {
            runAlone(batch[0])
            return
        }
        let rolledBack = LedgerError(.storage, reason: "SQLite rolled the write transaction back after an error; nothing of it was kept", isRetryable: true)
        var errors = [LedgerError?](repeating: nil, count: batch.count)
        var abortedAt: Int?
        connection.stagedRollupChanges = []
        defer { connection.stagedRollupChanges = nil }
        for (index, job) in batch.enumerated() {
            // What the jobs before staged: a job rolled back takes its bytes back (a count,
            // not a copy: holding the array would copy it at the job's first append).
            let staged = connection.stagedRollupChanges?.count ?? 0
            do throws(LedgerError) {
                try connection.run("SAVEPOINT job")
                let failed = job.run(connection)
                guard connection.isInTransaction else {
                    if !failed { errors[index] = rolledBack }
                    abortedAt = index
                    break
                }
                if failed {
                    try connection.run("ROLLBACK TO job")
                    connection.stagedRollupChanges?.removeSubrange(staged...)
                }
                try connection.run("RELEASE job")
            } catch {
                errors[index] = error
                if !connection.isInTransaction {
                    abortedAt = index
                    break
                }
            }
        }
        if let abortedAt {
            for (index, job) in batch.enumerated() {
                job.finish(index == abortedAt ? errors[index] : rolledBack)  // the failing job keeps its own error
            }
            return
        }
        let commitError: LedgerError?
        do throws(LedgerError) {
            try beforeCommit(connection)
            commitError = commit()
        } catch {
            commitError = error
            if connection.isInTransaction { _ = rollBack() }
        }
        for (index, job) in batch.enumerated() {
            job.finish(commitError ?? errors[index])
        }
    }

    /// A lone job in the transaction just begun: committed when it succeeds, rolled back when
    /// it fails (or when SQLite already rolled it back).
    private func runAlone(_ job: Job) {
        let failed = job.run(connection)
        guard connection.isInTransaction else {
            job.finish(failed ? nil : LedgerError(.storage, reason: "SQLite rolled the write transaction back after an error; nothing of it was kept", isRetryable: true))
            return
        }
        guard !failed else {
            job.finish(rollBack())
            return
        }
        job.finish(commit())
    }

    /// Commits the open transaction; on failure rolls back what is left and returns the error.
    private func commit() -> LedgerError? {
        do throws(LedgerError) {
            try connection.run("COMMIT")
            onCommit()
            return nil
        } catch {
            if connection.isInTransaction {
                _ = rollBack()  // the commit's error is what the callers get
            }
            return error
        }
    }

    /// Rolls the open transaction back; `nil` when that worked (a failed job's own error then
    /// stands), or the rollback's error.
    private func rollBack() -> LedgerError? {
        do throws(LedgerError) {
            try connection.run("ROLLBACK")
            return nil
        } catch {
            return error
        }
    }
}

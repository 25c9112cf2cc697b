import CoreMetrics
import StoreGateCore
public import StoreGateLedger
public import StoreGateWorkers

/// Folds the rollup changes recordings queue into the analytics rollups
/// (``AnalyticsStore/foldRollupChanges(limit:)``), every `interval` and at once while more
/// wait: the writes then pay for one queued row each, and the rollups' pages are written
/// once per fold instead of once per write.
///
/// Reads of the analytics fold first whatever this worker does; it keeps the queue short and
/// the PostgreSQL SQL views, which read the rollups directly, at most an interval behind. Runs
/// on every instance; on PostgreSQL one folds at a time (an advisory lock), each change once.
public struct RollupFoldService: PeriodicWorker {
    let ledger: any Ledger
    let batch: Int
    public let schedule: WorkerSchedule
    private let folded = Counter(label: "storegate_analytics_folded_changes_total")

    public var workerName: String { "analytics_fold" }

    /// The wait after a round that emptied the queue, unless configured otherwise.
    public static let defaultInterval: Duration = .seconds(1)

    /// - Parameters:
    ///   - ledger: The ledger whose queued changes it folds.
    ///   - interval: The wait after a round that emptied the queue.
    ///   - batch: Queued changes (one per write) per fold transaction: small enough that a
    ///     SQLite writer waits a few milliseconds for it, not tens.
    public init(ledger: any Ledger, interval: Duration = RollupFoldService.defaultInterval, batch: Int = 1_000) {
        self.ledger = ledger
        self.batch = max(1, batch)
        self.schedule = WorkerSchedule(interval: interval, backoff: Backoff(first: .seconds(1), maximum: .seconds(30)))
    }

    public func round() async throws -> WorkerPace {
        let count = try await ledger.foldRollupChanges(limit: batch)
        if count > 0 { folded.increment(by: count) }
        return count == batch ? .again : .idle
    }
}

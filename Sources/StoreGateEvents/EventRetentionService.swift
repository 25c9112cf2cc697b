public import Foundation
public import Logging
import CoreMetrics
import StoreGateCore
public import StoreGateLedger
public import StoreGateWorkers

/// Deletes the events older than the retention period, every `interval`
/// (``Ledger/pruneEvents(recordedBefore:limit:)``): the oldest first, never one still owed to
/// a webhook endpoint (a pending or failed delivery holds retention back until it is delivered
/// or redelivered), a batch per transaction.
///
/// Runs on every instance; on PostgreSQL one prunes at a time (the others wait for its batch,
/// then find less to do). A cursor below the deleted events then reads `cursor_expired`.
public struct EventRetentionService: PeriodicWorker {
    let ledger: any Ledger
    let retention: Duration
    let batch: Int
    let logger: Logger
    let now: @Sendable () -> Date
    public let schedule: WorkerSchedule
    private let pruned = Counter(label: "storegate_events_pruned_total")

    public var workerName: String { "event_retention" }

    /// - Parameters:
    ///   - ledger: The ledger whose events it deletes.
    ///   - retention: How long an event is kept after it was recorded.
    ///   - interval: How often it looks for old events.
    ///   - batch: Events per ledger transaction.
    ///   - now: The clock.
    public init(
        ledger: any Ledger, retention: Duration, interval: Duration = .seconds(3600), batch: Int = 10_000, logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.ledger = ledger
        self.retention = retention
        self.schedule = WorkerSchedule(interval: interval, backoff: Backoff(first: .seconds(5), maximum: .seconds(300)))
        self.batch = batch
        self.logger = logger
        self.now = now
    }

    public func round() async throws -> WorkerPace {
        try await prune()
        return .idle
    }

    /// Deletes every event past retention, a batch at a time.
    ///
    /// - Returns: How many were deleted.
    /// - Throws: The ledger's error; the old events stay for the next round.
    @discardableResult
    public func prune() async throws(LedgerError) -> Int {
        let cutoff = now().addingTimeInterval(-Double(retention.components.seconds))
        var total = 0
        var through: Int64 = 0
        defer {
            if total > 0 {
                pruned.increment(by: total)
                logger.info("deleted events past retention", metadata: ["events": "\(total)", "through": "\(through)"])
            }
        }
        while !Task.isCancelled {
            let pruning = try await ledger.pruneEvents(recordedBefore: cutoff, limit: batch)
            total += pruning.deleted
            through = pruning.prunedThrough
            if pruning.deleted < batch { break }
        }
        return total
    }

    /// One round, its failure logged rather than thrown (see ``prune()``).
    ///
    /// - Returns: How many were deleted (those deleted before a failure count).
    @discardableResult
    public func tick() async -> Int {
        do throws(LedgerError) {
            return try await prune()
        } catch {
            logger.warning("event retention could not run", metadata: ["error": "\(error.code)", "reason": "\(error.reason)"])
            return 0
        }
    }
}

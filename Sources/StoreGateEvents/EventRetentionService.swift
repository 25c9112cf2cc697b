public import Foundation
public import Logging
import CoreMetrics
public import ServiceLifecycle
public import StoreGateLedger

/// Deletes the events older than the retention period, every `interval`
/// (``Ledger/pruneEvents(recordedBefore:limit:)``): the oldest first, never one still owed to
/// a webhook endpoint (a pending or failed delivery holds retention back until it is delivered
/// or redelivered), a batch per transaction.
///
/// Runs on every instance; on PostgreSQL one prunes at a time (the others wait for its batch,
/// then find less to do). A cursor below the deleted events then reads `cursor_expired`.
public struct EventRetentionService: Service {
    let ledger: any Ledger
    let retention: Duration
    let interval: Duration
    let batch: Int
    let logger: Logger
    let now: @Sendable () -> Date
    private let pruned = Counter(label: "storegate_events_pruned_total")
    private let failures = Counter(label: "storegate_events_prune_failures_total")

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
        self.interval = interval
        self.batch = batch
        self.logger = logger
        self.now = now
    }

    public func run() async throws {
        await repeatEvery(interval) { _ = await self.tick() }
    }

    /// Deletes every event past retention, a batch at a time.
    /// - Returns: How many were deleted.
    @discardableResult
    public func tick() async -> Int {
        let cutoff = now().addingTimeInterval(-Double(retention.components.seconds))
        var total = 0
        var through: Int64 = 0
        do throws(LedgerError) {
            while !Task.isCancelled {
                let pruning = try await ledger.pruneEvents(recordedBefore: cutoff, limit: batch)
                total += pruning.deleted
                through = pruning.prunedThrough
                if pruning.deleted < batch { break }
            }
        } catch {
            // The database is unavailable: the old events stay for the next tick.
            failures.increment()
            logger.warning("event retention could not run", metadata: ["error": "\(error.code)", "reason": "\(error.reason)"])
        }
        if total > 0 {
            pruned.increment(by: total)
            logger.info("deleted events past retention", metadata: ["events": "\(total)", "through": "\(through)"])
        }
        return total
    }
}

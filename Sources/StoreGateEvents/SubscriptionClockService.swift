public import Foundation
public import Logging
import CoreMetrics
public import StoreGateLedger
public import StoreGateWorkers

/// Appends the subscription state changes that time alone makes — a period or a grace period
/// ending — to the ledger's event stream, every `interval`
/// (``Ledger/emitElapsedTransitions(until:limit:)``).
///
/// Runs on every instance: the ledger appends each transition once however many clocks run
/// (SQLite serializes writers; PostgreSQL refuses the second write of a family and the clock
/// moves on). A transition reaches the stream at most `interval` after its moment, or earlier
/// when a write to the family comes first. A round the ledger fails is tried again after the
/// worker's backoff (``PeriodicService``); the families stay due until then.
public struct SubscriptionClockService: PeriodicWorker {
    let ledger: any Ledger
    let batch: Int
    let logger: Logger
    let now: @Sendable () -> Date
    public let schedule: WorkerSchedule
    private let due = Counter(label: "storegate_events_clock_families_total")

    public var workerName: String { "subscription_clock" }

    /// - Parameters:
    ///   - ledger: The ledger whose families it watches.
    ///   - interval: How often it looks for due families.
    ///   - batch: Families per ledger transaction.
    ///   - now: The clock.
    public init(
        ledger: any Ledger, interval: Duration = .seconds(15), batch: Int = 500, logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.ledger = ledger
        self.schedule = WorkerSchedule(interval: interval)
        self.batch = batch
        self.logger = logger
        self.now = now
    }

    public func round() async throws -> WorkerPace {
        try await emitDue()
        return .idle
    }

    /// Takes every due family, a batch at a time.
    ///
    /// - Returns: How many families were due.
    /// - Throws: The ledger's error; the families stay due.
    @discardableResult
    public func emitDue() async throws(LedgerError) -> Int {
        var total = 0
        defer {
            if total > 0 {
                due.increment(by: total)
                logger.debug("appended time-driven subscription transitions", metadata: ["families": "\(total)"])
            }
        }
        while !Task.isCancelled {
            let count = try await ledger.emitElapsedTransitions(until: now(), limit: batch)
            total += count
            if count < batch { break }
        }
        return total
    }

    /// One round, its failure logged rather than thrown (see ``emitDue()``).
    ///
    /// - Returns: How many families were due (0 when the ledger failed).
    @discardableResult
    public func tick() async -> Int {
        do throws(LedgerError) {
            return try await emitDue()
        } catch {
            logger.warning("the subscription clock could not run", metadata: ["error": "\(error.code)", "reason": "\(error.reason)"])
            return 0
        }
    }
}

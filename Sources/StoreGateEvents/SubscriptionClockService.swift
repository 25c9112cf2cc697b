public import Foundation
public import Logging
import CoreMetrics
public import ServiceLifecycle
public import StoreGateLedger

/// Appends the subscription state changes that time alone makes — a period or a grace period
/// ending — to the ledger's event stream, every `interval`
/// (``Ledger/emitElapsedTransitions(until:limit:)``).
///
/// Runs on every instance: the ledger appends each transition once however many clocks run
/// (SQLite serializes writers; PostgreSQL refuses the second write of a family and the clock
/// moves on). A transition reaches the stream at most `interval` after its moment, or earlier
/// when a write to the family comes first.
public struct SubscriptionClockService: Service {
    let ledger: any Ledger
    let interval: Duration
    let batch: Int
    let logger: Logger
    let now: @Sendable () -> Date
    private let due = Counter(label: "storegate_events_clock_families_total")
    private let failures = Counter(label: "storegate_events_clock_failures_total")

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
        self.interval = interval
        self.batch = batch
        self.logger = logger
        self.now = now
    }

    public func run() async throws {
        await repeatEvery(interval) { _ = await self.tick() }
    }

    /// Takes every due family, a batch at a time.
    /// - Returns: How many families were due.
    @discardableResult
    public func tick() async -> Int {
        var total = 0
        do throws(LedgerError) {
            while !Task.isCancelled {
                let count = try await ledger.emitElapsedTransitions(until: now(), limit: batch)
                total += count
                if count < batch { break }
            }
        } catch {
            // The database is unavailable: the families stay due for the next tick.
            failures.increment()
            logger.warning("the subscription clock could not run", metadata: ["error": "\(error.code)", "reason": "\(error.reason)"])
        }
        if total > 0 {
            due.increment(by: total)
            logger.debug("appended time-driven subscription transitions", metadata: ["families": "\(total)"])
        }
        return total
    }
}

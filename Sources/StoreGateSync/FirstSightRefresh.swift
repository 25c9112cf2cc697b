public import Foundation
public import Logging
public import StoreGateWorkers
import StoreGateCore
public import StoreGateLedger

/// Refreshes an account from Apple when one of its families is first seen: it follows the
/// ledger's outbox and, for every `purchase.recorded` that a receipt or a signed transaction
/// caused (not a notification: Apple sent that one itself), runs the ``AccountRefresher``.
/// For a legacy receipt this is Apple's migration path, done without being asked: the
/// receipt's transaction ids lead to the full history.
///
/// Its place in the outbox is a leased state, so one instance follows the stream at a time
/// and a restarted one continues where it stopped. A new deployment starts at the end of the
/// stream (existing accounts are refreshed on demand, not all at once). Refreshes run one at
/// a time, so Apple sees at most one account's calls at once; when Apple is unavailable or
/// answers 429 the same event is tried again after Apple's `Retry-After` (or 30 s), and a
/// refresh refused by the per-account limit is skipped (the account was just refreshed).
public struct FirstSightRefresh: PeriodicWorker {
    /// The name of its place in the outbox among the ledger's leased states.
    public static let stateName = "sync/first-sight"

    /// Its place: the sequence of the last event handled.
    static let place = LeasedValue<Int64>(stateName)

    private let refresher: AccountRefresher
    private let outbox: OutboxPlace<Int64>
    private let logger: Logger
    private let now: @Sendable () -> Date
    public let schedule: WorkerSchedule

    public var workerName: String { "first_sight_refresh" }

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - refresher: Refreshes one account (its rate limit applies).
    ///   - ledger: The outbox read and the place kept.
    ///   - holder: This instance's name in leases.
    ///   - pollInterval: The wait when the outbox has nothing new (default 1 s).
    ///   - lease: How long a killed instance holds the stream (default 2 minutes).
    ///   - logger: The service's logger.
    ///   - now: The clock.
    public init(
        refresher: AccountRefresher, ledger: any Ledger, holder: String, pollInterval: Duration = .seconds(1),
        lease: Duration = .seconds(120), logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.refresher = refresher
        self.outbox = OutboxPlace(state: Self.place, ledger: ledger, holder: holder, lease: lease, now: now) { $0 }
        self.schedule = WorkerSchedule(interval: pollInterval, backoff: Backoff(first: .seconds(5), maximum: .seconds(60)))
        self.logger = logger
        self.now = now
    }

    /// Sets its place at the end of the stream when it has none yet (a new deployment): run it
    /// before the service accepts its first request, so that every purchase the service
    /// records from then on is after the place and refreshed — however late the worker's first
    /// round comes (a fresh PostgreSQL database is migrated first). Nothing happens when the
    /// place exists or another instance holds it (that instance set it).
    public func initializePlace() async throws(LedgerError) {
        try await outbox.initialize()
    }

    public func round() async throws -> WorkerPace {
        try await step().pace(now: now())
    }

    public func stop() async {
        do throws(LedgerError) {
            try await outbox.release()
        } catch {
            // The lease runs out by itself.
            logger.debug("first-sight refresh: the lease could not be released", metadata: ["error": "\(error.code)"])
        }
    }

    /// What one step did.
    public typealias Step = OutboxStep

    /// One step, a ledger failure answered with a wait of 5 seconds (see ``step()``).
    public func processOnce() async -> Step {
        do throws(LedgerError) {
            return try await step()
        } catch {
            logger.warning("first-sight refresh: the ledger failed", metadata: ["error": "\(error.code)", "reason": "\(error.reason)"])
            return .waitUntil(now().addingTimeInterval(5))
        }
    }

    /// Handles the events after its place, up to a page, and saves the new place.
    ///
    /// - Throws: The ledger's failure (the place stays); ``LedgerError/Code/corruptState``
    ///   when the stored place is not a sequence.
    public func step() async throws(LedgerError) -> Step {
        // Without a place yet (``initializePlace()`` was not run) it begins at the end of the stream.
        let place: Int64
        switch try await outbox.acquire() {
        case .held(let held): place = held
        case .started: return .progressed
        case .notHolder: return .notHolder
        }
        guard let events = try await outbox.events(after: place) else {
            // Retention deleted events this follower had not reached: go on from the
            // oldest kept (the refresher's own rate limit absorbs accounts seen again).
            logger.warning("first-sight refresh: events past its place were deleted by retention; continuing from the oldest kept", metadata: ["place": "\(place)"])
            return try await outbox.save(0) ? .progressed : .notHolder
        }
        guard !events.isEmpty else { return .idle }
        var handled = place
        for event in events {
            if Self.isFirstSight(event) {
                do {
                    _ = try await refresher.refresh(event.account)
                } catch where error.code == .appleUnavailable || error.code == .ledger {
                    // Keep the place before this event and try it again later.
                    guard try await outbox.save(handled) else { return .notHolder }
                    return .waitUntil(error.retryAfter ?? now().addingTimeInterval(30))
                } catch {
                    // Rate-limited (just refreshed) or Apple's answer refused (logged and
                    // counted by the refresher): move on.
                    logger.info("first-sight refresh skipped", metadata: ["account": "\(event.account.rawValue)", "reason": "\(error.code.rawValue)"])
                }
            }
            handled = event.sequence
        }
        return try await outbox.save(handled) ? .progressed : .notHolder
    }

    /// A family recorded for the first time from a proof the app sent.
    static func isFirstSight(_ event: LedgerEvent) -> Bool {
        event.type == .purchaseRecorded && event.source != ProofKind.notification.rawValue
    }
}

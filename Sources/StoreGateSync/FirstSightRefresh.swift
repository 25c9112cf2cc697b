public import Foundation
public import Logging
public import ServiceLifecycle
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
public struct FirstSightRefresh: Service {
    /// The name of its place in the outbox among the ledger's leased states.
    public static let stateName = "sync/first-sight"

    private let refresher: AccountRefresher
    private let ledger: any Ledger & LeasedStateStore
    private let holder: String
    private let pollInterval: Duration
    private let lease: Duration
    private let logger: Logger
    private let now: @Sendable () -> Date

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
        refresher: AccountRefresher, ledger: any Ledger & LeasedStateStore, holder: String, pollInterval: Duration = .seconds(1),
        lease: Duration = .seconds(120), logger: Logger, now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.refresher = refresher
        self.ledger = ledger
        self.holder = holder
        self.pollInterval = pollInterval
        self.lease = lease
        self.logger = logger
        self.now = now
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let outcome = await self.processOnce()
                switch outcome {
                case .waitUntil(let date):
                    try? await Task.sleep(for: .seconds(max(0.05, date.timeIntervalSince(self.now()))))
                case .idle, .notHolder:
                    try? await Task.sleep(for: self.pollInterval)
                case .progressed:
                    continue
                }
            }
            try? await self.ledger.releaseLease(on: Self.stateName, holder: self.holder)
        }
    }

    /// What one step did.
    public enum Step: Sendable, Hashable {
        /// Events were handled (or skipped) and the place moved.
        case progressed
        /// Nothing new in the outbox.
        case idle
        /// Another instance follows the stream.
        case notHolder
        /// Apple is unavailable until then; the same event is tried again.
        case waitUntil(Date)
    }

    /// Handles the events after its place, up to a page, and saves the new place.
    public func processOnce() async -> Step {
        do {
            guard let state = try await ledger.acquireLease(on: Self.stateName, holder: holder, now: now(), lease: lease) else { return .notHolder }
            guard let text = state.value, let place = Int64(text) else {
                // First start: begin at the end of the stream.
                var last: Int64 = 0
                while let tail = try await ledger.events(after: last, limit: maximumEventPage).last { last = tail.sequence }
                _ = try await ledger.saveLeasedState(Self.stateName, value: String(last), holder: holder, now: now(), lease: lease)
                return .progressed
            }
            let events: [LedgerEvent]
            do {
                events = try await ledger.events(after: place, limit: 100)
            } catch where error.code == .cursorExpired {
                // Retention deleted events this follower had not reached: go on from the
                // oldest kept (the refresher's own rate limit absorbs accounts seen again).
                logger.warning("first-sight refresh: events past its place were deleted by retention; continuing from the oldest kept", metadata: ["place": "\(place)"])
                return try await save(0) ? .progressed : .notHolder
            }
            guard !events.isEmpty else { return .idle }
            var handled = place
            for event in events {
                if Self.isFirstSight(event) {
                    do {
                        _ = try await refresher.refresh(event.account)
                    } catch where error.code == .appleUnavailable || error.code == .ledger {
                        // Keep the place before this event and try it again later.
                        guard try await save(handled) else { return .notHolder }
                        return .waitUntil(error.retryAfter ?? now().addingTimeInterval(30))
                    } catch {
                        // Rate-limited (just refreshed) or Apple's answer refused (logged and
                        // counted by the refresher): move on.
                        logger.info("first-sight refresh skipped", metadata: ["account": "\(event.account.rawValue)", "reason": "\(error.code.rawValue)"])
                    }
                }
                handled = event.sequence
            }
            return try await save(handled) ? .progressed : .notHolder
        } catch {
            logger.warning("first-sight refresh: the ledger failed", metadata: ["error": "\(error)"])
            return .waitUntil(now().addingTimeInterval(5))
        }
    }

    /// Saves the place, fenced by the lease; `false` when another instance took it over.
    private func save(_ sequence: Int64) async throws(LedgerError) -> Bool {
        try await ledger.saveLeasedState(Self.stateName, value: String(sequence), holder: holder, now: now(), lease: lease)
    }

    /// A family recorded for the first time from a proof the app sent.
    static func isFirstSight(_ event: LedgerEvent) -> Bool {
        event.type == .purchaseRecorded && event.source != ProofKind.notification.rawValue
    }
}

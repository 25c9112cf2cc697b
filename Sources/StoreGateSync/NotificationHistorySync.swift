public import Foundation
public import Logging
public import Metrics
public import StoreGateAppStoreClient
import StoreGateCore
public import StoreGateLedger

/// Recovers the App Store Server Notifications the webhook missed, for one app and
/// environment, from Apple's Get Notification History.
///
/// Each ``run()`` takes the lease on its cursor in the ledger (one instance at a time; a
/// killed instance's lease runs out), reads the window from the last synced time (less the
/// look-back) to now, page by page, and applies every notification through
/// ``StoreGateLedger/Ledger/apply(_:)`` — the webhook's own idempotent path, so a
/// notification seen by both routes is applied once and the order of arrival does not change
/// the result. The client verifies every `signedPayload` as the webhook does (signature,
/// chain to Apple's root, bundle id, environment) and refuses a page holding one that fails:
/// nothing of that page is applied, the cursor stays, and the failure is reported (status,
/// metrics, log). After each page the cursor (window, pagination token, counters) is saved,
/// fenced by the lease.
public struct NotificationHistorySync: Sendable {
    /// What one run did.
    public struct Report: Sendable, Hashable {
        /// How a run ended.
        public enum Outcome: String, Sendable, Hashable {
            /// The window was read to its end; the cursor moved to its end.
            case completed
            /// The page limit was reached; the next run resumes where this one stopped.
            case partial
            /// Another instance holds the sync.
            case leaseHeldElsewhere = "lease_held_elsewhere"
            /// The lease was taken over mid-run (this instance stalled past it).
            case leaseLost = "lease_lost"
            /// Apple, the verification of a page, or the ledger failed; see ``Report/error``.
            case failed
        }

        /// How the run ended.
        public var outcome: Outcome
        /// Pages read.
        public var pages = 0
        /// Notifications new to the ledger.
        public var recovered = 0
        /// Notifications the ledger already had.
        public var duplicates = 0
        /// Notifications the ledger refused.
        public var rejected = 0
        /// Why the run failed (`failed`).
        public var error: SyncError?
        /// Apple asked not to be called before this (a 429 beyond what the client waits).
        public var retryAfter: Date?
    }

    /// The client of the app and environment synced (it verifies every signed payload).
    public let client: AppStoreServerAPIClient
    private let ledger: any Ledger
    private let settings: NotificationSyncSettings
    private let holder: String
    private let consumption: ConsumptionResponder?
    private let metrics: SyncMetrics
    private let logger: Logger
    private let now: @Sendable () -> Date

    /// Creates the sync of `client`'s app and environment.
    ///
    /// - Parameters:
    ///   - client: The App Store Server API client (its credentials name the app).
    ///   - ledger: The ledger notifications are applied to and the cursor is kept in.
    ///   - settings: Window, look-back, lease, page limit.
    ///   - holder: This instance's name in leases (unique per process).
    ///   - consumption: Queues the answer to every recovered `CONSUMPTION_REQUEST`, as the
    ///     webhook does (once per notification, whichever route saw it first).
    ///   - metrics: Where the sync's instruments are created.
    ///   - logger: Receives runs and failures; never a signed payload.
    ///   - now: The clock.
    public init(
        client: AppStoreServerAPIClient,
        ledger: any Ledger,
        settings: NotificationSyncSettings = NotificationSyncSettings(),
        holder: String,
        consumption: ConsumptionResponder? = nil,
        metrics: any MetricsFactory = MetricsSystem.factory,
        logger: Logger,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.client = client
        self.ledger = ledger
        self.settings = settings
        self.holder = holder
        self.consumption = consumption
        self.metrics = SyncMetrics(factory: metrics, environment: client.environment)
        self.logger = logger
        self.now = now
    }

    /// The name of this sync's cursor among the ledger's leased states.
    public var stateName: String { Self.statePrefix + "\(client.bundleId)/\(client.environment.rawValue)" }

    /// The prefix of every sync cursor's name.
    public static let statePrefix = "sync/notification-history/"

    /// Reads the history from the cursor to now once (or up to the page limit).
    public func run() async -> Report {
        let started = now()
        let lease: Leased<SyncCursor>?
        do {
            lease = try await ledger.acquireLease(on: cursorState, holder: holder, now: started, lease: settings.lease)
        } catch {
            return finish(Report(outcome: .failed, error: SyncError(error)), cursor: nil)
        }
        guard let lease else { return finish(Report(outcome: .leaseHeldElsewhere), cursor: nil) }
        var cursor = SyncCursor()
        do throws(LedgerError) {
            cursor = try lease.get() ?? SyncCursor()
        } catch {
            // Starting over is safe (notifications read again are applied once); the failure
            // is kept in the cursor for the status until a run completes.
            logger.error("the stored sync cursor cannot be read; starting over", metadata: ["sync.state": "\(stateName)", "error": "\(error.reason)"])
            cursor.lastError = SyncCursor.Failure(code: SyncError(error).code.rawValue, message: error.reason, at: started.ledgerMilliseconds)
        }
        cursor.lastRunAt = started.ledgerMilliseconds
        var report = Report(outcome: .completed)
        let outcome = await read(&cursor, report: &report, startedAt: started)
        report.outcome = outcome.outcome
        report.error = outcome.error
        report.retryAfter = outcome.error?.retryAfter
        if outcome.outcome == .failed, let error = outcome.error {
            cursor.lastError = SyncCursor.Failure(code: error.code.rawValue, message: error.reason, at: now().ledgerMilliseconds)
        }
        if outcome.outcome != .leaseLost {
            // The final save (the failure, or the completed window); a lost lease saves nothing.
            do throws(LedgerError) {
                if try await ledger.save(cursorState, cursor, holder: holder, now: now(), lease: settings.lease) == false {
                    report.outcome = .leaseLost
                }
                try await ledger.releaseLease(on: stateName, holder: holder)
            } catch {
                // The lease runs out by itself; the next run resumes from the last page saved.
                report.outcome = .failed
                report.error = report.error ?? SyncError(error)
            }
        }
        return finish(report, cursor: cursor)
    }

    private struct Ending {
        var outcome: Report.Outcome
        var error: SyncError?
    }

    /// The typed view of this sync's cursor.
    private var cursorState: LeasedValue<SyncCursor> { LeasedValue(stateName) }

    /// Reads pages until the window ends, the page limit, a failure or a lost lease.
    private func read(_ cursor: inout SyncCursor, report: inout Report, startedAt: Date) async -> Ending {
        if cursor.window == nil {
            // Apple keeps 180 days (the sandbox 30); stay an hour inside so a slow first page is not refused.
            let oldest = startedAt.addingTimeInterval(-(NotificationSyncSettings.appleRetention(of: client.environment).seconds - 3600))
            var start = cursor.syncedUntil.map { Date(ledgerMilliseconds: $0).addingTimeInterval(-settings.lookBack.seconds) }
                ?? settings.firstStart ?? oldest
            start = max(start, oldest)
            guard start < startedAt else { return Ending(outcome: .completed) }
            cursor.window = SyncCursor.Window(start: start.ledgerMilliseconds, end: startedAt.ledgerMilliseconds)
        }
        var restartedWindow = false
        // The next page is fetched and verified while this one is applied (Apple's answer and
        // the verification on one core, the ledger's writes on the other).
        var prefetched: Prefetch?
        defer { prefetched?.task.cancel() }
        while let window = cursor.window {
            guard report.pages < max(1, settings.maxPagesPerRun) else { return Ending(outcome: .partial) }
            let query = NotificationHistoryQuery(startDate: Date(ledgerMilliseconds: window.start), endDate: Date(ledgerMilliseconds: window.end))
            let page: NotificationHistoryPage
            do {
                page = try await fetch(query, token: window.paginationToken, prefetched: prefetched)
                prefetched = nil
                if page.hasMore, let next = page.paginationToken, report.pages + 1 < max(1, settings.maxPagesPerRun) {
                    let client = self.client
                    prefetched = Prefetch(query: query, token: next, task: Task { try await client.notificationHistory(query, paginationToken: next) })
                }
            } catch {
                prefetched = nil
                metrics.appleError(error)
                if (error.apiError == .paginationTokenExpired || error.apiError == .invalidPaginationToken), window.paginationToken != nil, !restartedWindow {
                    // A token from an earlier run expired: read the window again from its
                    // first page (what was applied is applied once).
                    logger.info("the pagination token expired; reading the window again", metadata: ["sync.state": "\(stateName)"])
                    cursor.window?.paginationToken = nil
                    restartedWindow = true
                    continue
                }
                logger.error("notification history failed", metadata: [
                    "sync.state": "\(stateName)", "error.code": "\(error.code)", "error": "\(error.reason)",
                ])
                return Ending(outcome: .failed, error: SyncError(error))
            }
            var counts = (recovered: 0, duplicates: 0, rejected: 0)
            for item in page.items {
                do {
                    let outcome = try await ledger.apply(item.notification)
                    try await consumption?.enqueue(item.notification)
                    if outcome.isDuplicate {
                        counts.duplicates += 1
                    } else {
                        counts.recovered += 1
                    }
                } catch where error.isRetryable {
                    logger.error("the ledger failed while applying recovered notifications", metadata: ["error.code": "\(error.code)", "error": "\(error.reason)"])
                    return Ending(outcome: .failed, error: SyncError(error))
                } catch {
                    // Refused for good (an inconsistent notification): the webhook would refuse
                    // it too; it must not hold the cursor back forever.
                    counts.rejected += 1
                    logger.warning("a recovered notification was refused by the ledger", metadata: [
                        "notification.uuid": "\(item.notification.notificationUUID)", "error.code": "\(error.code)", "error": "\(error.reason)",
                    ])
                }
            }
            report.pages += 1
            report.recovered += counts.recovered
            report.duplicates += counts.duplicates
            report.rejected += counts.rejected
            cursor.pages += 1
            cursor.recovered += Int64(counts.recovered)
            cursor.duplicates += Int64(counts.duplicates)
            cursor.rejected += Int64(counts.rejected)
            if page.hasMore, let token = page.paginationToken {
                cursor.window?.paginationToken = token
            } else {
                cursor.syncedUntil = window.end
                cursor.window = nil
                cursor.lastSuccessAt = now().ledgerMilliseconds
                cursor.lastError = nil
            }
            do {
                guard try await ledger.save(cursorState, cursor, holder: holder, now: now(), lease: settings.lease) else {
                    logger.warning("the sync lease was taken over; stopping", metadata: ["sync.state": "\(stateName)"])
                    return Ending(outcome: .leaseLost)
                }
            } catch {
                return Ending(outcome: .failed, error: SyncError(error))
            }
        }
        return Ending(outcome: .completed)
    }

    /// A page being fetched ahead.
    private struct Prefetch {
        let query: NotificationHistoryQuery
        let token: String
        let task: Task<NotificationHistoryPage, any Error>
    }

    /// The page at `token`: the one fetched ahead when it is that page, else fetched now.
    private func fetch(_ query: NotificationHistoryQuery, token: String?, prefetched: Prefetch?) async throws(AppStoreClientError) -> NotificationHistoryPage {
        guard let prefetched, prefetched.token == token, prefetched.query == query else {
            prefetched?.task.cancel()
            return try await client.notificationHistory(query, paginationToken: token)
        }
        do {
            return try await prefetched.task.value
        } catch let error as AppStoreClientError {
            throw error
        } catch {
            throw AppStoreClientError(.cancelled, reason: "the history page fetched ahead was cancelled", environment: client.environment)
        }
    }

    private func finish(_ report: Report, cursor: SyncCursor?) -> Report {
        metrics.run(report, cursor: cursor, now: now())
        if report.outcome != .leaseHeldElsewhere {
            logger.info("notification history sync", metadata: [
                "sync.state": "\(stateName)", "outcome": "\(report.outcome.rawValue)", "pages": "\(report.pages)",
                "recovered": "\(report.recovered)", "duplicates": "\(report.duplicates)", "rejected": "\(report.rejected)",
            ])
        }
        return report
    }
}

public import Foundation
public import Logging
public import ServiceLifecycle
public import StoreGateWorkers
import StoreGateCore
import StoreGateAppStoreClient
public import StoreGateLedger

/// Runs the notification history sync of every configured environment, every
/// ``NotificationSyncSettings/interval``, in the application's `ServiceGroup` (it stops on a
/// graceful shutdown, releasing its leases).
///
/// It is started only when App Store Server API credentials are configured. With several
/// instances on PostgreSQL each runs it; the lease on each cursor lets exactly one read a
/// given app and environment at a time.
public struct AppStoreSyncService: Service {
    /// The syncs run, one per environment.
    public let syncs: [NotificationHistorySync]
    private let interval: Duration
    private let logger: Logger

    /// Creates the service.
    ///
    /// - Parameters:
    ///   - syncs: One sync per app and environment.
    ///   - interval: Time between two runs of each.
    ///   - logger: The service's logger.
    public init(syncs: [NotificationHistorySync], interval: Duration, logger: Logger) {
        self.syncs = syncs
        self.interval = interval
        self.logger = logger
    }

    /// One worker per sync: a run every interval (plus up to a tenth of it at random, so
    /// instances started together do not all ask Apple at the same moment); the next run at
    /// once when a run stopped at its page limit (a first run over months of history goes on);
    /// a failed run is retried after the interval, never before Apple's `Retry-After`.
    public var workers: [any PeriodicWorker] {
        syncs.map { Worker(sync: $0, interval: interval) }
    }

    /// Runs the workers until graceful shutdown (without a start gate or health registry; the
    /// server runs ``workers`` with its own).
    public func run() async throws {
        try await PeriodicService.runAll(workers, logger: logger)
    }

    /// The wait before a sync's next run after `report` (see ``workers``).
    func pause(after report: NotificationHistorySync.Report, now: Date) -> Duration {
        Worker.schedule(interval: interval).pause(after: Worker.pace(after: report, now: now))
    }

    /// Runs one sync.
    struct Worker: PeriodicWorker {
        let sync: NotificationHistorySync
        let interval: Duration

        var workerName: String { "appstore_sync/\(sync.client.environment.rawValue)" }

        var schedule: WorkerSchedule { Self.schedule(interval: interval) }

        static func schedule(interval: Duration) -> WorkerSchedule {
            WorkerSchedule(interval: interval, jitter: 0.1, backoff: Backoff(first: interval, maximum: interval, jitter: 0))
        }

        func round() async throws -> WorkerPace {
            let report = await sync.run()
            if report.outcome == .failed, let error = report.error { throw error }
            return Self.pace(after: report, now: Date())
        }

        static func pace(after report: NotificationHistorySync.Report, now: Date) -> WorkerPace {
            if report.outcome == .partial { return .after(.seconds(1)) }
            if let retryAfter = report.retryAfter {
                let seconds = max(0, retryAfter.timeIntervalSince(now))
                return .after(.milliseconds(Int64((seconds * 1000).rounded(.up))))
            }
            return .idle
        }
    }

    /// Where every sync stands, read from the ledger (so any instance answers the same).
    public static func statuses(
        of store: any LeasedStateStore, at date: Date
    ) async throws(LedgerError) -> [NotificationSyncStatus] {
        try await store.leasedValues(SyncCursor.self, prefix: NotificationHistorySync.statePrefix).compactMap { leased -> NotificationSyncStatus? in
            let state = leased.state
            let parts = state.name.dropFirst(NotificationHistorySync.statePrefix.count).split(separator: "/")
            guard parts.count == 2 else { return nil }
            var cursor = SyncCursor()
            do throws(LedgerError) {
                cursor = try leased.get() ?? SyncCursor()
            } catch {
                // Shown as the failure it is (the next run starts over and says so too).
                cursor.lastError = SyncCursor.Failure(code: SyncError(error).code.rawValue, message: error.reason, at: date.ledgerMilliseconds)
            }
            return NotificationSyncStatus(
                bundleId: String(parts[0]), environment: AppStoreEnvironment(rawValue: String(parts[1])), cursor: cursor,
                leaseHolder: state.isLeased(at: date) ? state.holder : nil
            )
        }
    }
}

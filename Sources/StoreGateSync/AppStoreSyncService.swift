public import Foundation
public import Logging
public import ServiceLifecycle
import StoreGateCore
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

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            await withTaskGroup(of: Void.self) { group in
                for sync in self.syncs {
                    group.addTask {
                        while !Task.isCancelled {
                            let report = await sync.run()
                            try? await Task.sleep(for: self.pause(after: report, now: Date()))
                        }
                    }
                }
            }
        }
    }

    /// The wait before a sync's next run: the interval, plus up to a tenth of it at random (so
    /// instances started together do not all ask Apple at the same moment); a second when the
    /// run stopped at its page limit (a first run over months of history goes on at once);
    /// never before Apple's `Retry-After`.
    func pause(after report: NotificationHistorySync.Report, now: Date) -> Duration {
        var seconds = report.outcome == .partial
            ? 1
            : Double(interval.components.seconds) * (1 + Double.random(in: 0...0.1))
        if let retryAfter = report.retryAfter { seconds = max(seconds, retryAfter.timeIntervalSince(now)) }
        return .milliseconds(Int64(seconds * 1000))
    }

    /// Where every sync stands, read from the ledger (so any instance answers the same).
    public static func statuses(
        of store: any LeasedStateStore, at date: Date
    ) async throws(LedgerError) -> [NotificationSyncStatus] {
        try await store.leasedStates(prefix: NotificationHistorySync.statePrefix).compactMap { state -> NotificationSyncStatus? in
            let parts = state.name.dropFirst(NotificationHistorySync.statePrefix.count).split(separator: "/")
            guard parts.count == 2 else { return nil }
            let cursor = state.value.flatMap(SyncCursor.decode) ?? SyncCursor()
            return NotificationSyncStatus(
                bundleId: String(parts[0]), environment: AppStoreEnvironment(rawValue: String(parts[1])), cursor: cursor,
                leaseHolder: state.isLeased(at: date) ? state.holder : nil
            )
        }
    }
}

public import Foundation
public import StoreGateCore
import StoreGateLedger

/// Where the sync of one app and environment stands, as `GET /v1/sync/status` shows it.
public struct NotificationSyncStatus: Sendable {
    /// The app.
    public let bundleId: String
    /// The environment.
    public let environment: AppStoreEnvironment
    /// Everything up to this time has been read from Apple's history.
    public let syncedUntil: Date?
    /// The window being read, when a run stopped part-way (it resumes there).
    public let windowInProgress: (start: Date, end: Date)?
    /// When a run last started.
    public let lastRunAt: Date?
    /// When a run last read its window to the end.
    public let lastSuccessAt: Date?
    /// The last run's failure, when it failed.
    public let lastError: (code: String, message: String, at: Date)?
    /// Notifications the webhook had missed, applied by the sync (since the first run).
    public let recovered: Int64
    /// Notifications the webhook had already stored.
    public let duplicates: Int64
    /// Notifications the ledger refused.
    public let rejected: Int64
    /// History pages read.
    public let pages: Int64
    /// The instance holding the sync now, when one does.
    public let leaseHolder: String?

    /// How far behind Apple's history the ledger may be at `date`: time since `syncedUntil`
    /// (`nil` before the first complete run).
    public func lag(at date: Date) -> TimeInterval? {
        syncedUntil.map { max(0, date.timeIntervalSince($0)) }
    }

    init(bundleId: String, environment: AppStoreEnvironment, cursor: SyncCursor, leaseHolder: String?) {
        let date = Date.init(ledgerMilliseconds:)
        self.bundleId = bundleId
        self.environment = environment
        syncedUntil = cursor.syncedUntil.map(date)
        windowInProgress = cursor.window.map { (date($0.start), date($0.end)) }
        lastRunAt = cursor.lastRunAt.map(date)
        lastSuccessAt = cursor.lastSuccessAt.map(date)
        lastError = cursor.lastError.map { ($0.code, $0.message, date($0.at)) }
        recovered = cursor.recovered
        duplicates = cursor.duplicates
        rejected = cursor.rejected
        pages = cursor.pages
        self.leaseHolder = leaseHolder
    }
}

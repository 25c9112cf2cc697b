import Foundation

/// The sync's place in Get Notification History for one app and environment, kept in the
/// ledger (a ``StoreGateLedger/LeasedState``) so it survives restarts and moves between
/// instances.
///
/// `syncedUntil` is the end of the last window read to its last page; a window in progress
/// keeps its bounds and Apple's pagination token, so a run that stops (killed, lease lost,
/// page limit) resumes on the next page rather than from the start.
struct SyncCursor: Codable, Sendable, Hashable {
    struct Window: Codable, Sendable, Hashable {
        /// Milliseconds since 1970, as Apple's `startDate` and `endDate`.
        var start: Int64
        var end: Int64
        var paginationToken: String?
    }

    struct Failure: Codable, Sendable, Hashable {
        var code: String
        var message: String
        var at: Int64
    }

    var syncedUntil: Int64?
    var window: Window?
    var lastRunAt: Int64?
    var lastSuccessAt: Int64?
    var lastError: Failure?
    /// Notifications the ledger had not stored before (missed by the webhook).
    var recovered: Int64 = 0
    /// Notifications the webhook had already stored.
    var duplicates: Int64 = 0
    /// Notifications the ledger refused (logged with their reason).
    var rejected: Int64 = 0
    var pages: Int64 = 0

    init() {}
}

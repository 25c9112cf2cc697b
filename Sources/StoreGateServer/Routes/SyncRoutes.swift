import Foundation
import Hummingbird
import StoreGateCore
import StoreGateLedger
import StoreGateSync

/// The reply of `GET /v1/sync/status` (`SyncStatus`).
struct SyncStatusReply: JSONWritable {
    let enabled: Bool
    let interval: Int64
    let statuses: [NotificationSyncStatus]
    let now: Date

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("enabled", enabled)
            json.member("intervalSeconds", interval)
            json.key("notificationHistory")
            json.array(statuses) { json, status in
                json.object { json in
                    json.member("bundleId", status.bundleId)
                    json.member("environment", status.environment.rawValue)
                    json.member("syncedUntil", status.syncedUntil)
                    json.member("lagSeconds", status.lag(at: now).map { Int64($0.rounded()) })
                    json.member("windowStart", status.windowInProgress?.start)
                    json.member("windowEnd", status.windowInProgress?.end)
                    json.member("lastRunAt", status.lastRunAt)
                    json.member("lastSuccessAt", status.lastSuccessAt)
                    json.member("lastErrorCode", status.lastError?.code)
                    json.member("lastError", status.lastError?.message)
                    json.member("lastErrorAt", status.lastError?.at)
                    json.member("recovered", status.recovered)
                    json.member("duplicates", status.duplicates)
                    json.member("rejected", status.rejected)
                    json.member("pages", status.pages)
                    json.member("leaseHolder", status.leaseHolder)
                }
            }
        }
    }
}

extension Endpoints {
    /// `GET /v1/sync/status`: where the App Store sync of each app and environment stands,
    /// read from the ledger (every instance answers the same).
    @Sendable func readSyncStatus(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        var statuses: [NotificationSyncStatus] = []
        if let store = ledger as? any LeasedStateStore {
            do throws(LedgerError) {
                statuses = try await AppStoreSyncService.statuses(of: store, at: now())
            } catch {
                throw APIError.ledger(error, logger: context.logger)
            }
        }
        return JSONReply.response(SyncStatusReply(
            enabled: configuration.isSyncConfigured, interval: Int64(configuration.syncSettings.interval.components.seconds),
            statuses: statuses, now: now()
        ))
    }
}

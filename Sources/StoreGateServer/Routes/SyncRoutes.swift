import Foundation
import Hummingbird
import Logging
import StoreGateCore
import StoreGateLedger
import StoreGateSync

/// The reply of `GET /v1/sync/status` (`SyncStatus`).
struct SyncStatusReply: JSONWritable {
    let enabled: Bool
    let interval: Int64
    let statuses: [NotificationSyncStatus]
    let consumptionAnswered: Bool
    let consumption: ConsumptionResponder.Summary
    let finishTransactions: Bool
    let accountLinking: Bool
    let actions: TransactionActions.Progress?
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
            json.key("consumptionRequests")
            json.object { json in
                json.member("answered", consumptionAnswered)
                json.member("pending", Int64(consumption[.pending]))
                json.member("sent", Int64(consumption[.sent]))
                json.member("expired", Int64(consumption[.expired]))
                json.member("failed", Int64(consumption[.failed]))
                json.member("lastErrorTransactionId", consumption.lastErrorTransactionId)
                json.member("lastError", consumption.lastError)
                json.member("adjusted", consumption.adjusted)
                json.member("lastAdjustmentTransactionId", consumption.lastAdjustmentTransactionId)
                json.member("lastAdjustment", consumption.lastAdjustment)
                json.key("recent")
                json.array(consumption.recent) { json, request in
                    json.object { json in
                        json.member("transactionId", request.transactionId)
                        json.member("environment", request.environment)
                        json.member("state", request.state.rawValue)
                        json.member("requestedAt", request.requestedAt)
                        json.member("attempts", request.attempts)
                        json.member("deliveryStatus", request.deliveryStatus)
                        json.member("consumptionPercentage", request.consumptionPercentage)
                        json.member("refundPreference", request.refundPreference)
                        json.member("preferenceSource", request.preferenceSource)
                        json.member("adjustment", request.adjustment)
                        json.member("lastError", request.lastError)
                    }
                }
            }
            json.key("transactionActions")
            json.object { json in
                json.member("finishTransactions", finishTransactions)
                json.member("accountLinking", accountLinking)
                json.member("finished", actions?.finished ?? 0)
                json.member("linked", actions?.linked ?? 0)
                json.member("failed", actions?.failed ?? 0)
                json.member("eventSequence", actions?.sequence)
                json.member("lastActionAt", actions?.lastActionAt)
                json.member("lastErrorTransactionId", actions?.lastErrorTransactionId)
                json.member("lastError", actions?.lastError)
            }
        }
    }
}

extension Endpoints {
    /// `GET /v1/sync/status`: where the App Store sync of each app and environment stands,
    /// read from the ledger (every instance answers the same).
    @Sendable func readSyncStatus(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        var statuses: [NotificationSyncStatus] = []
        var consumption = ConsumptionResponder.Summary()
        var actions: TransactionActions.Progress?
        do throws(LedgerError) {
            statuses = try await AppStoreSyncService.statuses(of: ledger, at: now())
            consumption = try await ConsumptionResponder.summary(of: ledger)
            actions = try await TransactionActions.progress(in: ledger)
        } catch {
            throw APIError.ledger(error, logger: context.logger)
        }
        return JSONReply.response(SyncStatusReply(
            enabled: configuration.isSyncConfigured, interval: Int64(configuration.syncSettings.interval.components.seconds),
            statuses: statuses, consumptionAnswered: appStore?.consumption != nil, consumption: consumption,
            finishTransactions: appStore != nil && configuration.finishTransactions, accountLinking: appStore != nil && configuration.accountLinking,
            actions: actions, now: now()
        ))
    }
}

/// The reply of `POST /v1/sync/test-notification` (`TestNotificationReply`).
struct TestNotificationReply: JSONWritable {
    let result: TestNotificationCheck.Result

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("environment", result.environment)
            json.member("checkedAt", result.checkedAt)
            json.member("passed", result.passed)
            json.key("hops")
            json.array(result.hops) { json, hop in
                json.object { json in
                    json.member("name", hop.name)
                    json.member("ok", hop.isOK)
                    json.member("detail", hop.detail)
                }
            }
        }
    }
}

extension Endpoints {
    /// `POST /v1/sync/test-notification?environment=production|sandbox`: asks Apple for a test
    /// notification, waits (up to 60 s) until Apple reports delivering it, and confirms the
    /// webhook stored it; every hop in the reply, the result kept for `/readyz`. 200 with
    /// `passed` false when a hop failed.
    @Sendable func testNotification(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        guard let appStore else {
            throw APIError(.conflict, .appstoreNotConfigured, "the check needs App Store Server API credentials (STOREGATE_APPSTORE_*) and STOREGATE_SYNC on")
        }
        let name = request.uri.queryParameters["environment"].map(String.init) ?? "production"
        guard let environment = AppStoreEnvironment(name: name), let client = appStore.client(environment) else {
            throw APIError(.badRequest, .invalidQueryParameter, "'environment' is an accepted Apple environment: production or sandbox", field: "environment")
        }
        let result = await TestNotificationCheck(client: client, ledger: ledger, pollInterval: .seconds(1)).run()
        await TestNotificationCheck.remember(result, in: ledger, holder: appStore.holder)
        context.logger.info("test notification check", metadata: ["environment": "\(environment.rawValue)", "passed": "\(result.passed)"])
        return JSONReply.response(TestNotificationReply(result: result))
    }
}

extension Endpoints {
    /// The App Store sync's status and Apple's test notification.
    var syncRoutes: [Route] {
        [
            Route(.get, "/v1/sync/status", .apiKey(.syncRead), readSyncStatus),
            Route(.post, "/v1/sync/test-notification", .apiKey(.syncManage), testNotification),
        ]
    }
}

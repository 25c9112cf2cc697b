import Foundation
import Hummingbird
import HummingbirdTesting
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateServer
import StoreGateSync
import StoreGateTestSupport
import Testing

@Suite("The App Store sync in the service")
struct SyncEndpointTests {
    @Test("with Server API credentials the service syncs: a refund the webhook missed takes pro away; status and metrics show it")
    func recoversMissedRefund() async throws {
        try await AppleStandIn.run { standIn in
            let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: TestData.bundleId)
            standIn.setServerAPIAccount(account)
            let minter = try TestData.jwsMinter
            let bought = Date().addingTimeInterval(-7200)
            let refunded = Date().addingTimeInterval(-1800)
            var purchase = JWSPayloads.transaction(
                bundleId: TestData.bundleId, signedDate: bought, transactionId: "8800000000000001",
                originalTransactionId: "8800000000000001", productId: TestData.pro, type: "Non-Consumable"
            )
            let signedPurchase = try minter.mint(json: purchase)
            purchase["revocationDate"] = JWSPayloads.milliseconds(refunded)
            purchase["revocationReason"] = 0
            purchase["signedDate"] = JWSPayloads.milliseconds(refunded)
            let refund = try minter.mint(json: JWSPayloads.notification(
                type: "REFUND", bundleId: TestData.bundleId, signedDate: refunded,
                signedTransactionInfo: try minter.mint(json: purchase), notificationUUID: UUID().uuidString.lowercased()
            ))
            for environment in [AppStoreEnvironment.production, .sandbox] {
                standIn.updateServerAPIData(environment, bundleId: TestData.bundleId) { $0.notifications = environment == .sandbox ? [refund] : [] }
            }

            var configuration = try TestData.configuration()
            configuration.serverAPICredentials = credentials
            configuration.appStoreEndpoints = standIn.serverAPIEndpoints
            configuration.syncSettings.interval = .seconds(1)
            // Refresh on first sight is checked on its own (AccountRefreshTests); here the
            // explicit refresh below must be the account's first.
            configuration.refreshOnFirstSight = false
            var keys = configuration.apiKeys
            try keys.add(name: "ops", secret: "ops-key-0123456789abcdef", permissions: [.syncRead, .syncManage, .accountsRefresh])
            configuration.apiKeys = keys
            let (app, _) = TestData.application(configuration)
            try await app.test(.live) { client in
                // The app's client sends the purchase; the webhook never receives the refund.
                let recorded = try await client.send(.post, "/v1/transactions/verify", key: TestData.fullKey,
                                                     body: try TestData.json(["signedTransaction": signedPurchase, "account": "zoe"]))
                #expect(recorded.status == .ok)
                func sandbox() async throws -> [String: Any]? {
                    let reply = try await client.send(.get, "/v1/sync/status", key: "ops-key-0123456789abcdef")
                    #expect(reply.status == .ok)
                    #expect(try reply.json["enabled"] as? Bool == true)
                    let entries = try reply.json["notificationHistory"] as? [[String: Any]] ?? []
                    return entries.first { $0["environment"] as? String == "Sandbox" }
                }
                var entry: [String: Any]?
                for _ in 0..<400 {
                    entry = try await sandbox()
                    if entry?["recovered"] as? Int == 1 { break }
                    try await Task.sleep(for: .milliseconds(25))
                }
                #expect(entry?["recovered"] as? Int == 1, "\(entry ?? [:])")
                #expect(entry?["syncedUntil"] is String)
                #expect(entry?["lastErrorCode"] == nil)
                #expect(entry?["bundleId"] as? String == TestData.bundleId)
                #expect(try await client.send(.get, "/v1/sync/status", key: TestData.readerKey).status == .forbidden)
                let owned = try await client.send(.get, "/v1/accounts/zoe/entitlements", key: TestData.fullKey)
                #expect(product(try owned.json, "nonConsumables", TestData.pro)?["isEntitled"] as? Bool == false)
                let metrics = String(buffer: try await client.send(.get, "/metrics").body)
                #expect(metrics.contains("storegate_sync_notifications_total{environment=\"Sandbox\",outcome=\"recovered\"} 1"))
                #expect(metrics.contains("storegate_sync_lag_seconds{environment=\"Sandbox\"}"))
                #expect(metrics.contains("storegate_sync_runs_total{environment=\"Production\",outcome=\"completed\"}"))

                // A refresh asks Apple about zoe's one family; again at once is too soon.
                let refreshed = try await client.send(.post, "/v1/accounts/zoe/refresh", key: "ops-key-0123456789abcdef")
                #expect(refreshed.status == .ok)
                #expect(try refreshed.json["families"] as? Int == 1)
                let again = try await client.send(.post, "/v1/accounts/zoe/refresh", key: "ops-key-0123456789abcdef")
                #expect(again.status == .tooManyRequests)
                #expect(try again.json["code"] as? String == "rate_limited")
                #expect(Int(again.headers[.retryAfter] ?? "") ?? 0 >= 50)
                #expect(try await client.send(.post, "/v1/accounts/zoe/refresh", key: TestData.readerKey).status == .forbidden)

                // The wiring check: Apple (the stand-in) posts its test notification to this
                // service's webhook; the check sees Apple's SUCCESS and the notification stored.
                let port = try #require(client.port)
                standIn.setNotificationURL("http://127.0.0.1:\(port)/v1/notifications/apple", for: .sandbox)
                standIn.updateServerAPIData(.sandbox, bundleId: TestData.bundleId) {
                    $0.testNotification = try? minter.mint(json: JWSPayloads.notification(
                        type: "TEST", bundleId: TestData.bundleId, signedDate: Date(), notificationUUID: UUID().uuidString.lowercased()
                    ))
                }
                let check = try await client.send(.post, "/v1/sync/test-notification?environment=sandbox", key: "ops-key-0123456789abcdef")
                #expect(check.status == .ok)
                let checked = try check.json
                let hops = checked["hops"] as? [[String: Any]] ?? []
                #expect(checked["passed"] as? Bool == true, "\(hops)")
                #expect(hops.compactMap { $0["name"] as? String } == ["requested", "attempt", "stored"])
                let ready = try await client.send(.get, "/readyz")
                #expect(member(try ready.json, "checks", "appStoreNotifications", "status") as? String == "ok")
                #expect(try await client.send(.post, "/v1/sync/test-notification?environment=xcode", key: "ops-key-0123456789abcdef").status == .badRequest)
                #expect(try await client.send(.post, "/v1/sync/test-notification", key: TestData.fullKey.replacingOccurrences(of: "full", with: "nope")).status == .unauthorized)
            }
        }
    }
}

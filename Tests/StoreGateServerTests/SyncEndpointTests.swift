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
                // The status shows the page as soon as it is saved; the run's counters follow when the
                // run ends, and the production sync runs on its own: wait for both runs' counters.
                var metrics = ""
                #expect(try await AppleActionsEndpointTests.eventually {
                    metrics = String(buffer: try await client.send(.get, "/metrics").body)
                    return metrics.contains("storegate_sync_notifications_total{environment=\"Sandbox\",outcome=\"recovered\"}")
                        && metrics.contains("storegate_sync_runs_total{environment=\"Production\",outcome=\"completed\"}")
                })
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

    @Test("with STOREGATE_CONSUMPTION=consented a CONSUMPTION_REQUEST reaching the webhook is answered from the ledger; status and metrics show it")
    func answersConsumptionRequest() async throws {
        try await AppleStandIn.run { standIn in
            let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: TestData.bundleId)
            standIn.setServerAPIAccount(account)
            for environment in [AppStoreEnvironment.production, .sandbox] {
                standIn.updateServerAPIData(environment, bundleId: TestData.bundleId) { _ in }
            }
            let minter = try TestData.jwsMinter
            let coins = try minter.mint(json: JWSPayloads.transaction(
                bundleId: TestData.bundleId, signedDate: Date().addingTimeInterval(-600), transactionId: "8900000000000001",
                originalTransactionId: "8900000000000001", productId: "coins.100", type: "Consumable", quantity: 4
            ))
            let request = try minter.mint(json: JWSPayloads.notification(
                type: "CONSUMPTION_REQUEST", bundleId: TestData.bundleId, signedDate: Date().addingTimeInterval(-60),
                signedTransactionInfo: coins, notificationUUID: UUID().uuidString.lowercased()
            ))
            var configuration = try TestData.configuration()
            configuration.serverAPICredentials = credentials
            configuration.appStoreEndpoints = standIn.serverAPIEndpoints
            configuration.refreshOnFirstSight = false
            configuration.consumption.customerConsented = true
            configuration.consumption.refundPreference = .decline
            configuration.consumption.pollInterval = .milliseconds(50)
            var keys = configuration.apiKeys
            try keys.add(name: "ops", secret: "ops-key-0123456789abcdef", permissions: [.syncRead])
            configuration.apiKeys = keys
            let (app, _) = TestData.application(configuration)
            try await app.test(.live) { client in
                let recorded = try await client.send(.post, "/v1/transactions/verify", key: TestData.fullKey,
                                                     body: try TestData.json(["signedTransaction": coins, "account": "yan"]))
                #expect(recorded.status == .ok)
                let consumed = try await client.send(.post, "/v1/accounts/yan/consumables/coins.100/consume", key: TestData.fullKey,
                                                     body: try TestData.json(["quantity": 1, "idempotencyKey": "spend-1"]))
                #expect(consumed.status == .ok)
                // Apple delivers the request twice; it is answered once.
                for _ in 0..<2 {
                    let stored = try await client.send(.post, "/v1/notifications/apple", body: try TestData.json(["signedPayload": request]))
                    #expect(stored.status == .ok)
                }
                for _ in 0..<400 where standIn.consumptionRequests.isEmpty {
                    try await Task.sleep(for: .milliseconds(25))
                }
                try await Task.sleep(for: .milliseconds(200))  // a second answer would have gone out by now
                // The stand-in counts the call when it receives it; the responder records the request
                // as sent only after Apple's answer, which a loaded machine may take a while to handle.
                var status = try await client.send(.get, "/v1/sync/status", key: "ops-key-0123456789abcdef")
                #expect(try await AppleActionsEndpointTests.eventually {
                    status = try await client.send(.get, "/v1/sync/status", key: "ops-key-0123456789abcdef")
                    return member(try status.json, "consumptionRequests", "sent") as? Int ?? 0 >= 1
                })
                let calls = standIn.consumptionRequests
                #expect(calls.map(\.transactionId) == ["8900000000000001"])
                let call = try #require(calls.first)
                let body = try #require(try JSONSerialization.jsonObject(with: Data(call.body)) as? [String: Any])
                #expect(body["deliveryStatus"] as? String == "DELIVERED")
                #expect(body["consumptionPercentage"] as? Int == 25_000)
                #expect(body["refundPreference"] as? String == "DECLINE")
                #expect(body["customerConsented"] as? Bool == true)
                let requests = try #require(try status.json["consumptionRequests"] as? [String: Any])
                #expect(requests["answered"] as? Bool == true)
                #expect(requests["sent"] as? Int == 1)
                #expect(requests["pending"] as? Int == 0)
                let metrics = String(buffer: try await client.send(.get, "/metrics").body)
                #expect(metrics.contains("storegate_sync_consumption_total{environment=\"Test\",outcome=\"sent\"} 1"), "\(metrics.split(separator: "\n").filter { $0.contains("consumption") })")
            }
        }
    }

    @Test("a refund policy chooses each answer's preference; one Apple would refuse is adjusted, and the status and the console say so")
    func consumptionPolicyAndAdjustment() async throws {
        try await AppleStandIn.run { standIn in
            let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: TestData.bundleId)
            standIn.setServerAPIAccount(account)
            let minter = try TestData.jwsMinter
            var minted: [String: String] = [:]
            for (id, quantity, daysAgo) in [("8910000000000001", 5, 3.0), ("8910000000000002", 10, 2.0)] {
                var payload = JWSPayloads.transaction(
                    bundleId: TestData.bundleId, signedDate: Date().addingTimeInterval(-600), transactionId: id,
                    originalTransactionId: id, productId: "coins.100", type: "Consumable", quantity: quantity
                )
                payload["purchaseDate"] = JWSPayloads.milliseconds(Date().addingTimeInterval(-daysAgo * 86_400))
                minted[id] = try minter.mint(json: payload)
            }
            let purchases = minted
            for environment in [AppStoreEnvironment.production, .sandbox] {
                standIn.updateServerAPIData(environment, bundleId: TestData.bundleId) { $0.transactions = purchases }
            }
            var configuration = try TestData.configuration()
            configuration.serverAPICredentials = credentials
            configuration.appStoreEndpoints = standIn.serverAPIEndpoints
            configuration.refreshOnFirstSight = false
            configuration.consumption.customerConsented = true
            configuration.consumption.refundPolicy = try ConsumptionRefundPolicy(parsing: "consumed<50%:grant_full; *:grant_prorated")
            configuration.consumption.pollInterval = .milliseconds(50)
            var keys = configuration.apiKeys
            try keys.add(name: "ops", secret: "ops-key-0123456789abcdef", permissions: [.syncRead])
            configuration.apiKeys = keys
            let (app, _) = TestData.application(configuration)
            try await app.test(.live) { client in
                for id in purchases.keys.sorted() {
                    let recorded = try await client.send(.post, "/v1/transactions/verify", key: TestData.fullKey,
                                                         body: try TestData.json(["signedTransaction": purchases[id] ?? "", "account": "zoe"]))
                    #expect(recorded.status == .ok)
                }
                let consumed = try await client.send(.post, "/v1/accounts/zoe/consumables/coins.100/consume", key: TestData.fullKey,
                                                     body: try TestData.json(["quantity": 8, "idempotencyKey": "spend-8"]))
                #expect(consumed.status == .ok)
                for id in purchases.keys.sorted() {
                    let request = try minter.mint(json: JWSPayloads.notification(
                        type: "CONSUMPTION_REQUEST", bundleId: TestData.bundleId, signedDate: Date().addingTimeInterval(-60),
                        signedTransactionInfo: purchases[id] ?? "", notificationUUID: UUID().uuidString.lowercased()
                    ))
                    #expect(try await client.send(.post, "/v1/notifications/apple", body: try TestData.json(["signedPayload": request])).status == .ok)
                }
                for _ in 0..<400 where standIn.consumptionRequests.count < 2 {
                    try await Task.sleep(for: .milliseconds(25))
                }
                var bodies: [String: [String: Any]] = [:]
                for call in standIn.consumptionRequests {
                    bodies[call.transactionId] = try JSONSerialization.jsonObject(with: Data(call.body)) as? [String: Any]
                }
                // The 5 coins bought first are used up; 3 of the 10 are used.
                #expect(bodies["8910000000000001"]?["consumptionPercentage"] as? Int == 100_000)
                #expect(bodies["8910000000000001"]?["refundPreference"] as? String == "DECLINE")  // rule 2 said GRANT_PRORATED
                #expect(bodies["8910000000000002"]?["consumptionPercentage"] as? Int == 30_000)
                #expect(bodies["8910000000000002"]?["refundPreference"] as? String == "GRANT_FULL")  // rule 1
                #expect(standIn.consumptionRefusals.isEmpty)

                // The stand-in counts a call when it receives it; the responder records the request as
                // sent only after Apple's answer, which a loaded machine may take a while to handle.
                var status = try await client.send(.get, "/v1/sync/status", key: "ops-key-0123456789abcdef")
                #expect(try await AppleActionsEndpointTests.eventually {
                    status = try await client.send(.get, "/v1/sync/status", key: "ops-key-0123456789abcdef")
                    return member(try status.json, "consumptionRequests", "sent") as? Int ?? 0 >= 2
                })
                let requests = try #require(try status.json["consumptionRequests"] as? [String: Any])
                #expect(requests["sent"] as? Int == 2)
                #expect(requests["adjusted"] as? Int == 1)
                #expect(requests["lastAdjustmentTransactionId"] as? String == "8910000000000001")
                #expect((requests["lastAdjustment"] as? String)?.contains("GRANT_PRORATED → DECLINE") == true)
                let recent = try #require(requests["recent"] as? [[String: Any]])
                let byId = Dictionary(uniqueKeysWithValues: recent.compactMap { item in (item["transactionId"] as? String).map { ($0, item) } })
                #expect(byId["8910000000000001"]?["preferenceSource"] as? String == "rule *:grant_prorated")
                #expect(byId["8910000000000001"]?["adjustment"] is String)
                #expect(byId["8910000000000002"]?["preferenceSource"] as? String == "rule consumed<50%:grant_full")
                #expect(byId["8910000000000002"]?["adjustment"] == nil)
                #expect(byId["8910000000000002"]?["state"] as? String == "sent")

                let browser = try #require(try await ConsoleTests.signIn(client).1)
                let system = try await client.execute(uri: "/console/system", method: .get, headers: browser.headers, body: nil)
                #expect(system.text.contains("1 answer(s) changed to meet Apple"), "\(system.text)")
                #expect(system.text.contains("8910000000000001"))
            }
        }
    }
}

import Foundation
import HTTPTypes
import HummingbirdTesting
import StoreGateCore
import StoreGateLedger
import StoreGateTestSupport
import Testing

@testable import StoreGateServer

/// The service acting at Apple where the ledger knows best (issue 33 item 3): finishing granted
/// transactions, linking accounts, and support's renewal date extensions.
@Suite("Apple actions through the service")
struct AppleActionsEndpointTests {
    static let opsKey = "ops-key-0123456789abcdef"
    static let namespace = UUID(uuidString: "6ba7b811-9dad-11d1-80b4-00c04fd430c8") ?? UUID()

    /// Waits up to 20 s for `condition`.
    static func eventually(_ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await condition()
    }

    @Test("a recorded subscription is finished and linked once at Apple; support extends it (audited in the account's events); a mass extension reports its progress")
    func finishLinkAndExtend() async throws {
        try await AppleStandIn.run { standIn in
            let (credentials, appleAccount) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: TestData.bundleId)
            standIn.setServerAPIAccount(appleAccount)
            let original = "8900000000000001"
            standIn.updateServerAPIData(.sandbox, bundleId: TestData.bundleId) {
                $0.purchases[original] = AppleStandIn.PurchaseFixture(productId: TestData.monthly, expiresDate: Date().addingTimeInterval(20 * 86_400), webOrderLineItemId: "8800000000000009")
            }
            var configuration = try TestData.configuration()
            configuration.serverAPICredentials = credentials
            configuration.appStoreEndpoints = standIn.serverAPIEndpoints
            configuration.refreshOnFirstSight = false
            configuration.finishTransactions = true
            configuration.accountLinking = true
            configuration.accountTokenPolicy = .nameBased(namespace: Self.namespace)
            var keys = configuration.apiKeys
            try keys.add(name: "ops", secret: Self.opsKey, permissions: [.syncRead, .subscriptionsExtend, .eventsRead])
            configuration.apiKeys = keys
            let (app, ledger) = TestData.application(configuration)
            try await app.test(.live) { client in
                let recorded = try await client.send(.post, "/v1/transactions/verify", key: TestData.fullKey, body: try TestData.json([
                    "signedTransaction": try TestData.signedTransaction(transactionId: original), "account": "ann",
                ]))
                #expect(recorded.status == .ok)
                #expect(try await Self.eventually { standIn.finishedTransactions.map(\.transactionId) == [original] })
                let token = AppAccountTokenPolicy.nameBased(namespace: Self.namespace).token(for: try AccountID("ann"))?.uuidString.lowercased()
                #expect(standIn.purchase(original, in: .sandbox)?.appAccountToken == token)
                // The stand-in counts the finish when it receives it; the service saves its progress
                // only after Apple's answer, which a loaded machine may take a while to handle.
                var status = try await client.send(.get, "/v1/sync/status", key: Self.opsKey)
                #expect(try await Self.eventually {
                    status = try await client.send(.get, "/v1/sync/status", key: Self.opsKey)
                    return member(try status.json, "transactionActions", "finished") as? Int ?? 0 >= 1
                })
                #expect(member(try status.json, "transactionActions", "finished") as? Int == 1)
                #expect(member(try status.json, "transactionActions", "linked") as? Int == 1)
                #expect(member(try status.json, "transactionActions", "finishTransactions") as? Bool == true)

                // Support extends ann's subscription by a week.
                let path = "/v1/accounts/ann/subscriptions/\(original)/extend"
                let extended = try await client.send(.post, path, key: Self.opsKey, body: try TestData.json([
                    "extendByDays": 7, "extendReasonCode": "customer-satisfaction", "requestIdentifier": "ticket-4711",
                ]))
                #expect(extended.status == .ok)
                #expect(try extended.json["success"] as? Bool == true)
                #expect(try extended.json["effectiveDate"] as? String != nil)
                #expect(standIn.purchase(original, in: .sandbox)?.extensions == 1)
                let audit = try await ledger.events(after: 0, limit: 100).filter { $0.type == .subscriptionExtended }
                #expect(audit.count == 1)
                #expect(audit.first?.account.rawValue == "ann" && audit.first?.support?.actor == "ops" && audit.first?.support?.days == 7)
                #expect(audit.first?.support?.reason == "customer-satisfaction" && audit.first?.originalTransactionId == original)
                // The same request again is Apple's first answer, extended once.
                let again = try await client.send(.post, path, key: Self.opsKey, body: try TestData.json([
                    "extendByDays": 7, "extendReasonCode": "customer-satisfaction", "requestIdentifier": "ticket-4711",
                ]))
                #expect(again.status == .ok)
                #expect(standIn.purchase(original, in: .sandbox)?.extensions == 1)

                // Refusals: another account's subscription, Apple's rules, no permission.
                let foreign = try await client.send(.post, "/v1/accounts/bob/subscriptions/\(original)/extend", key: Self.opsKey, body: try TestData.json([
                    "extendByDays": 7, "extendReasonCode": "other",
                ]))
                #expect(foreign.status == .notFound)
                #expect(try foreign.json["code"] as? String == "subscription_not_found")
                for (body, code) in [
                    (["extendByDays": 91, "extendReasonCode": "other"], "invalid_field"),
                    (["extendByDays": 7, "extendReasonCode": "because"], "invalid_field"),
                    (["extendReasonCode": "other"], "missing_field"),
                    (["extendByDays": 7, "extendReasonCode": "other", "productId": TestData.monthly], "unknown_field"),
                ] as [([String: Any], String)] {
                    let refused = try await client.send(.post, path, key: Self.opsKey, body: try TestData.json(body))
                    #expect(refused.status == .badRequest)
                    #expect(try refused.json["code"] as? String == code)
                }
                let forbidden = try await client.send(.post, path, key: TestData.readerKey, body: try TestData.json(["extendByDays": 7, "extendReasonCode": "other"]))
                #expect(forbidden.status == .forbidden)
                #expect(standIn.purchase(original, in: .sandbox)?.extensions == 1)
                // Apple's own refusal (the second extension of a too-old… here: a family Apple does not know).
                standIn.updateServerAPIData(.sandbox, bundleId: TestData.bundleId) { $0.purchases[original]?.isFamilyShared = true }
                let shared = try await client.send(.post, path, key: Self.opsKey, body: try TestData.json(["extendByDays": 3, "extendReasonCode": "other"]))
                #expect(shared.status == .unprocessableContent)
                #expect(try shared.json["code"] as? String == "apple_refused")

                // Every active subscriber of the product, in the sandbox.
                let mass = try await client.send(.post, "/v1/subscriptions/extensions?environment=sandbox", key: Self.opsKey, body: try TestData.json([
                    "productId": TestData.monthly, "extendByDays": 3, "extendReasonCode": "service-issue-or-outage", "requestIdentifier": "outage-2026-11-26",
                ]))
                #expect(mass.status == .accepted)
                #expect(try mass.json["requestIdentifier"] as? String == "outage-2026-11-26")
                let statusPath = "/v1/subscriptions/extensions/\(TestData.monthly)/outage-2026-11-26?environment=sandbox"
                #expect(try await Self.eventually {
                    let progress = try await client.send(.get, statusPath, key: Self.opsKey)
                    return try progress.json["complete"] as? Bool == true
                })
                let unknown = try await client.send(.get, "/v1/subscriptions/extensions/\(TestData.monthly)/nope?environment=sandbox", key: Self.opsKey)
                #expect(unknown.status == .unprocessableContent)
            }
        }
    }

    @Test("without App Store credentials the extension routes answer 409 appstore_not_configured")
    func unconfigured() async throws {
        var configuration = try TestData.configuration()
        var keys = configuration.apiKeys
        try keys.add(name: "ops", secret: Self.opsKey, permissions: [.subscriptionsExtend])
        configuration.apiKeys = keys
        let (app, _) = TestData.application(configuration)
        let body = try TestData.json(["extendByDays": 7, "extendReasonCode": "other"])
        try await app.testRouter { client in
            let reply = try await client.send(.post, "/v1/accounts/ann/subscriptions/1/extend", key: Self.opsKey, body: body)
            #expect(reply.status == .conflict)
            #expect(try reply.json["code"] as? String == "appstore_not_configured")
        }
    }
}

import Foundation
import HTTPTypes
import HummingbirdTesting
import StoreGateCore
import StoreGateEvents
import StoreGateLedger
import StoreGateTestSupport
import Testing

@testable import StoreGateServer

@Suite("Webhook endpoints from storegate serve: 410 Gone, state and enable")
struct WebhookEndpointRoutesTests {
    static let secret = "whsec_serve-secret-0123456789"
    static let opsKey = "ops-key-0123456789abcdef"

    static func waitUntil(_ condition: () async throws -> Bool) async throws -> Bool {
        for _ in 0..<500 {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    @Test("a receiver's 410 disables its endpoint: GET /v1/webhooks/endpoints shows it, nothing more is sent, POST …/enable resumes in order")
    func goneThenEnable() async throws {
        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            var configuration = try TestData.configuration()
            configuration.webhooks = [
                try WebhookEndpoint(name: "backend", url: receiver.url, secrets: [Self.secret, WebhookSecret.generate()]),
                try WebhookEndpoint(name: "quiet", url: receiver.url, secret: Self.secret, types: ["transaction.revoked"]),
            ]
            var policy = WebhookDeliveryPolicy()
            policy.attemptTimeout = .seconds(10)
            policy.pollInterval = .milliseconds(10)
            policy.stateInterval = .milliseconds(20)
            configuration.webhookPolicy = policy
            var keys = configuration.apiKeys
            try keys.add(name: "ops", secret: Self.opsKey, permissions: [.webhooksManage])
            configuration.apiKeys = keys
            let (app, _) = TestData.application(configuration)
            try await app.test(.live) { client in
                func endpoints() async throws -> [String: [String: Any]] {
                    let reply = try await client.send(.get, "/v1/webhooks/endpoints", key: Self.opsKey)
                    #expect(reply.status == .ok)
                    let list = try reply.json["endpoints"] as? [[String: Any]] ?? []
                    return Dictionary(uniqueKeysWithValues: list.compactMap { entry in (entry["name"] as? String).map { ($0, entry) } })
                }
                var listed = try await endpoints()
                #expect(listed["backend"]?["state"] as? String == "enabled")
                #expect(listed["backend"]?["secrets"] as? [String] == ["plain", "standard"])
                #expect(listed["quiet"]?["types"] as? [String] == ["transaction.revoked"])
                #expect(listed["backend"]?["disabledAt"] == nil)

                // No wait: the endpoints were placed at the end of the stream when they were stored.
                receiver.setMode(.gone)
                try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey,
                                      body: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "45000000"), account: "gil"))
                #expect(try await Self.waitUntil { try await endpoints()["backend"]?["state"] as? String == "disabled" })
                listed = try await endpoints()
                #expect(listed["backend"]?["disabledStatus"] as? Int == 410)
                #expect(listed["backend"]?["disabledAt"] is String)
                #expect(listed["quiet"]?["state"] as? String == "enabled")
                #expect(receiver.received.count == 1 && receiver.received.first?.status == 410)
                #expect(receiver.received.allSatisfy { $0.signatureValid && $0.standardSignatureValid })

                // Disabled: a new event waits, pending, like the one answered 410.
                receiver.setMode(.healthy)
                try await client.send(.post, "/v1/accounts/gil/consumables/\(TestData.coins)/consume", key: TestData.fullKey,
                                      body: try TestData.json(["quantity": 1, "idempotencyKey": "g1"]))
                // The new event becomes a pending delivery at the worker's next round, which no fixed
                // wait covers on a loaded machine; that round would also have claimed and sent it, were
                // the endpoint not disabled, and the 300 ms give such a request time to arrive.
                var deliveries: [[String: Any]] = []
                #expect(try await Self.waitUntil {
                    let pending = try await client.send(.get, "/v1/webhooks/deliveries?status=pending&endpoint=backend", key: Self.opsKey)
                    deliveries = try pending.json["deliveries"] as? [[String: Any]] ?? []
                    return deliveries.count >= 3
                })
                try await Task.sleep(for: .milliseconds(300))
                #expect(receiver.received.count == 1)
                #expect(deliveries.count == 3)
                #expect(deliveries.first?["lastStatus"] as? Int == 410)

                // Enabled by hand: all three arrive, in order.
                let enabled = try await client.send(.post, "/v1/webhooks/endpoints/backend/enable", key: Self.opsKey)
                #expect(enabled.status == .ok)
                #expect(try enabled.json["wasDisabled"] as? Bool == true)
                #expect(try enabled.json["state"] as? String == "enabled")
                #expect(try await Self.waitUntil { receiver.received.filter { $0.status == 200 }.count == 3 })
                let resumed = receiver.received.filter { $0.status == 200 }
                #expect(resumed.map(\.type) == ["consumable.credited", "purchase.recorded", "consumable.consumed"])
                #expect(resumed.first?.id == receiver.received.first?.id)
                #expect(try await endpoints()["backend"]?["state"] as? String == "enabled")

                let again = try await client.send(.post, "/v1/webhooks/endpoints/backend/enable", key: Self.opsKey)
                #expect(try again.json["wasDisabled"] as? Bool == false)
                let unknown = try await client.send(.post, "/v1/webhooks/endpoints/nope/enable", key: Self.opsKey)
                #expect(unknown.status == .notFound)
                #expect(try unknown.json["code"] as? String == "webhook_endpoint_not_found")
                #expect(try await client.send(.post, "/v1/webhooks/endpoints/backend/enable", key: TestData.readerKey).status == .forbidden)
                #expect(try await client.send(.get, "/v1/webhooks/endpoints", key: nil).status == .unauthorized)
            }
        }
    }
}

import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import StoreGateCore
import Testing

import StoreGateEvents
import StoreGateLedger
import StoreGateTestSupport
@testable import StoreGateServer

@Suite("The events stream")
struct EventEndpointTests {
    @Test("GET /v1/events pages through purchases, consumption and a refund in commit order")
    func stream() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let empty = try await client.send(.get, "/v1/events", key: TestData.fullKey)
            #expect(empty.status == .ok)
            #expect((try empty.json["events"] as? [Any])?.isEmpty == true)
            #expect(try empty.json["cursor"] as? Int == 0)

            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "43000000"), account: "erin <b>&"))
            try await client.send(.post, "/v1/accounts/erin%20%3Cb%3E%26/consumables/\(TestData.coins)/consume", key: TestData.fullKey,
                                  body: try TestData.json(["quantity": 2, "idempotencyKey": "order-1"]))
            let refunded = try await client.send(.post, "/v1/notifications/apple", body: try TestData.json(["signedPayload": try TestData.refund(transactionId: "4300000000000002")]))
            #expect(refunded.status == .ok)

            let all = try await client.send(.get, "/v1/events?limit=1000", key: TestData.fullKey)
            let events = try #require(try all.json["events"] as? [[String: Any]])
            #expect(events.map { $0["type"] as? String } == ["consumable.credited", "purchase.recorded", "consumable.consumed", "transaction.revoked"])
            #expect(events.allSatisfy { $0["account"] as? String == "erin <b>&" })
            let sequences = events.compactMap { $0["sequence"] as? Int }
            #expect(sequences == sequences.sorted() && Set(sequences).count == 4)
            #expect(try all.json["cursor"] as? Int == sequences.last)
            #expect(member(events[2], "entitlement", "balance", "available") as? Int == 3)
            #expect(member(events[3], "entitlement", "isEntitled") as? Bool == false)
            #expect(events[3]["notificationType"] as? String == "REFUND")
            #expect((events[0]["recordedAt"] as? String)?.hasSuffix("Z") == true)

            // Page by page with the cursor: the same events, then an empty page.
            var cursor = 0
            var paged: [String] = []
            while true {
                let page = try await client.send(.get, "/v1/events?after=\(cursor)&limit=1", key: TestData.fullKey)
                let batch = try #require(try page.json["events"] as? [[String: Any]])
                cursor = try #require(try page.json["cursor"] as? Int)
                guard let event = batch.first else { break }
                paged.append(try #require(event["id"] as? String))
            }
            #expect(paged == events.compactMap { $0["id"] as? String })
            #expect(cursor == sequences.last)
        }
    }

    @Test("retention deletes the oldest events; a cursor below them answers 410 cursor_expired, 0 reads from the oldest kept")
    func retention() async throws {
        let (app, ledger) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "44000000"), account: "fay"))
            try await client.send(.post, "/v1/accounts/fay/consumables/\(TestData.coins)/consume", key: TestData.fullKey,
                                  body: try TestData.json(["quantity": 1, "idempotencyKey": "order-1"]))
            let all = try #require(try await client.send(.get, "/v1/events", key: TestData.fullKey).json["events"] as? [[String: Any]])
            let sequences = all.compactMap { $0["sequence"] as? Int }
            #expect(sequences.count == 3)

            // The service run an hour later with a retention shorter than that: all but the newest go.
            let service = EventRetentionService(ledger: ledger, retention: .seconds(60), logger: Logger(label: "test"), now: { Date().addingTimeInterval(3600) })
            #expect(await service.tick() == 2)
            #expect(await service.tick() == 0)

            let expired = try await client.send(.get, "/v1/events?after=\(sequences[0])", key: TestData.fullKey)
            #expect(expired.status == .gone)
            #expect(expired.code == "cursor_expired")
            let kept = try await client.send(.get, "/v1/events?after=0", key: TestData.fullKey)
            #expect(kept.status == .ok)
            #expect((try kept.json["events"] as? [[String: Any]])?.compactMap { $0["sequence"] as? Int } == [sequences[2]])
            #expect(try await client.send(.get, "/v1/events?after=\(sequences[1])", key: TestData.fullKey).status == .ok)
        }
    }

    @Test("the events stream needs events.read; bad cursors and limits are refused", arguments: [
        "after=-1", "after=x", "after=1.5", "limit=0", "limit=1001", "limit=", "after=99999999999999999999",
    ])
    func refusals(_ query: String) async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let bad = try await client.send(.get, "/v1/events?\(query)", key: TestData.fullKey)
            #expect(bad.status == .badRequest)
            #expect(bad.code == "invalid_query_parameter")
            #expect(try await client.send(.get, "/v1/events", key: TestData.readerKey).status == .forbidden)
            #expect(try await client.send(.get, "/v1/events").status == .unauthorized)
        }
    }
}

@Suite("Webhooks from storegate serve")
struct WebhookServeTests {
    static let secret = "whsec_serve-secret-0123456789"

    @Test("the served application's clock appends a period's end that no write announced")
    func clock() async throws {
        var configuration = try TestData.configuration()
        configuration.clockInterval = .milliseconds(50)
        let (app, ledger) = TestData.application(configuration)
        try await app.test(.live) { client in
            let end = Date().addingTimeInterval(0.4).ledgerNormalized
            try await ledger.record(
                .subscriptionPeriod("4500000000000001", bundleId: TestData.bundleId, endingAt: end), for: try AccountID("gus"))
            var events: [[String: Any]] = []
            for _ in 0..<200 where events.count < 2 {
                try await Task.sleep(for: .milliseconds(20))
                events = try #require(try await client.send(.get, "/v1/events?limit=100", key: TestData.fullKey).json["events"] as? [[String: Any]])
            }
            #expect(events.map { $0["type"] as? String } == ["purchase.recorded", "subscription.state_changed"])
            #expect(events.last?["source"] as? String == "time")
            #expect(events.last?["previousState"] as? String == "active")
            #expect(member(events.last, "entitlement", "state") as? String == "expired")
            #expect(member(events.last, "entitlement", "isEntitled") as? Bool == false)
        }
    }

    @Test("the served application delivers events, lists a failed delivery, and redelivers it on request")
    func deliverFailAndRedeliver() async throws {
        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            var configuration = try TestData.configuration()
            configuration.webhooks = [try WebhookEndpoint(name: "backend", url: receiver.url, secret: Self.secret)]
            var policy = WebhookDeliveryPolicy()
            policy.attemptTimeout = .seconds(3)  // a loaded machine (the parallel suite) answers slowly; the failures here are 500s
            policy.firstRetry = .milliseconds(10)
            policy.maximumRetryInterval = .milliseconds(20)
            policy.retryWindow = .milliseconds(150)
            policy.pollInterval = .milliseconds(10)
            configuration.webhookPolicy = policy
            var keys = configuration.apiKeys
            try keys.add(name: "ops", secret: "ops-key-0123456789abcdef", permissions: [.webhooksManage])
            configuration.apiKeys = keys
            let (app, _) = TestData.application(configuration)
            try await app.test(.live) { client in
                // Up to 20 s: CI runs every suite at once on two cores, and a poll can take a second.
                func waitUntil(_ condition: () async throws -> Bool) async throws -> Bool {
                    let deadline = ContinuousClock.now + .seconds(20)
                    while ContinuousClock.now < deadline {
                        if try await condition() { return true }
                        try await Task.sleep(for: .milliseconds(10))
                    }
                    return try await condition()
                }
                // The endpoint was placed at the end of the stream when it was stored, before the
                // first request: what is recorded now is delivered, however late its worker starts.
                try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey,
                                      body: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "44000000"), account: "fay"))
                #expect(try await waitUntil { receiver.received.count >= 2 })
                #expect(receiver.received.map(\.type) == ["consumable.credited", "purchase.recorded"])
                #expect(receiver.received.allSatisfy { $0.signatureValid && $0.account == "fay" })

                receiver.setMode(.chaos(failures: 1, stalls: 0, stall: .zero, slow: 0, slowDelay: .zero))
                try await client.send(.post, "/v1/accounts/fay/consumables/\(TestData.coins)/consume", key: TestData.fullKey,
                                      body: try TestData.json(["quantity": 1, "idempotencyKey": "k1"]))
                var failed: [[String: Any]] = []
                #expect(try await waitUntil {
                    let page = try await client.send(.get, "/v1/webhooks/deliveries?status=failed", key: "ops-key-0123456789abcdef")
                    failed = try page.json["deliveries"] as? [[String: Any]] ?? []
                    return !failed.isEmpty
                })
                let sequence = try #require(failed.first?["sequence"] as? Int)
                #expect(failed.first?["eventType"] as? String == "consumable.consumed")
                #expect(failed.first?["lastStatus"] as? Int == 500)
                #expect((failed.first?["attempts"] as? Int ?? 0) >= 1)

                receiver.setMode(.healthy)
                let redelivered = try await client.send(.post, "/v1/webhooks/deliveries/backend/\(sequence)/redeliver", key: "ops-key-0123456789abcdef")
                #expect(redelivered.status == .accepted)
                #expect(try await waitUntil { receiver.received.last?.status == 200 && receiver.received.last?.type == "consumable.consumed" })
                // The receiver answered; the deliverer records it a moment later.
                #expect(try await waitUntil {
                    let delivered = try await client.send(.get, "/v1/webhooks/deliveries?status=delivered&endpoint=backend", key: "ops-key-0123456789abcdef")
                    return (try delivered.json["deliveries"] as? [Any])?.count == 3
                })

                #expect(try await client.send(.post, "/v1/webhooks/deliveries/backend/999999/redeliver", key: "ops-key-0123456789abcdef").status == .notFound)
                #expect(try await client.send(.get, "/v1/webhooks/deliveries?endpoint=nope", key: "ops-key-0123456789abcdef").status == .badRequest)
                #expect(try await client.send(.get, "/v1/webhooks/deliveries", key: TestData.readerKey).status == .forbidden)
            }
        }
    }
}

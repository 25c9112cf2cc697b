import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import Testing

@testable import StoreGateServer

@Suite("The events stream")
struct EventEndpointTests {
    @Test("GET /v1/events pages through purchases, consumption and a refund in commit order")
    func stream() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.test(.router) { client in
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

    @Test("the events stream needs events.read; bad cursors and limits are refused", arguments: [
        "after=-1", "after=x", "after=1.5", "limit=0", "limit=1001", "limit=", "after=99999999999999999999",
    ])
    func refusals(_ query: String) async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.test(.router) { client in
            let bad = try await client.send(.get, "/v1/events?\(query)", key: TestData.fullKey)
            #expect(bad.status == .badRequest)
            #expect(bad.code == "invalid_query_parameter")
            #expect(try await client.send(.get, "/v1/events", key: TestData.readerKey).status == .forbidden)
            #expect(try await client.send(.get, "/v1/events").status == .unauthorized)
        }
    }
}

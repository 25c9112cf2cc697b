import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import StoreGateLedger
import StoreGateTestSupport
import Testing

@testable import StoreGateServer

@Suite("Entitlements and consumption")
struct AccountEndpointTests {
    @Test("an unknown account has empty entitlements")
    func unknownAccount() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let response = try await client.send(.get, "/v1/accounts/nobody/entitlements", key: TestData.readerKey)
            #expect(response.status == .ok)
            let json = try response.json
            #expect(json["account"] as? String == "nobody")
            for list in ["entitledProductIds", "nonConsumables", "nonRenewingSubscriptions", "consumables", "subscriptions", "otherProducts"] {
                #expect((json[list] as? [Any])?.isEmpty == true, "\(list)")
            }
            #expect((json["asOf"] as? String)?.hasSuffix("Z") == true)
        }
    }

    @Test("an account's entitlements answer in the catalog's words; one entitlement is checked on its own; an unknown one is 404")
    func catalogEntitlements() async throws {
        let (app, _) = TestData.application(try TestData.entitlementsConfiguration())
        try await app.testRouter { client in
            let before = try await client.send(.get, "/v1/accounts/erin/entitlements/premium", key: TestData.readerKey)
            #expect(before.status == .ok)
            #expect(member(try before.json, "entitlement", "isActive") as? Bool == false)
            #expect(member(try before.json, "entitlement", "source") == nil)

            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "43500000"), account: "erin"))
            let all = try await client.send(.get, "/v1/accounts/erin/entitlements", key: TestData.readerKey)
            let entitlements = try #require(try all.json["entitlements"] as? [[String: Any]])
            #expect(entitlements.compactMap { $0["identifier"] as? String } == ["gems", "premium"])
            #expect(entitlements.first?["balance"] as? Int == 50)  // 5 coins worth 10 each
            #expect(member(entitlements.last, "source", "kind") as? String == "product")
            #expect(member(entitlements.last, "source", "productId") as? String == TestData.pro)

            let premium = try await client.send(.get, "/v1/accounts/erin/entitlements/premium", key: TestData.readerKey)
            #expect(premium.status == .ok)
            #expect(try premium.json["account"] as? String == "erin")
            #expect(member(try premium.json, "entitlement", "isActive") as? Bool == true)
            #expect(member(try premium.json, "entitlement", "identifier") as? String == "premium")
            #expect(member(try premium.json, "entitlement", "expiresAt") == nil)

            let unknown = try await client.send(.get, "/v1/accounts/erin/entitlements/nothing", key: TestData.readerKey)
            #expect(unknown.status == .notFound)
            #expect(unknown.code == "unknown_entitlement")
            let refused = try await client.send(.get, "/v1/accounts/erin/entitlements/premium")
            #expect(refused.status == .unauthorized)
        }
    }

    @Test("a reloaded catalog applies to existing customers at once; a bad one keeps the old and says why")
    func catalogReload() async throws {
        let file = try TemporaryFiles.file(Array(#"{"entitlements": {"premium": {"products": ["other"]}}}"#.utf8), name: "catalog.json")
        var configuration = try TestData.configuration()
        configuration.catalog = try ServerConfiguration.catalog(Array(try Data(contentsOf: file)))
        configuration.productsFile = file.path
        let store = CatalogStore(configuration.catalog, path: file.path)
        #expect(store.current.entitlements["premium"]?.products == ["other"])
        try Data(#"{"entitlements": {"premium": {"products": ["\#(TestData.pro)"]}}}"#.utf8).write(to: file)
        #expect(try store.reload() == 1)
        #expect(store.current.entitlements["premium"]?.products == [TestData.pro])
        try Data(#"{"entitlements": {"premium": {"products": []}}}"#.utf8).write(to: file)
        let refused = #expect(throws: ConfigurationError.self) { try store.reload() }
        #expect(refused?.setting == "STOREGATE_PRODUCTS_FILE")
        #expect(refused?.reason.contains("entitlement 'premium'") == true)
        #expect(store.current.entitlements["premium"]?.products == [TestData.pro])
    }

    @Test("account ids are percent-decoded from the path")
    func percentDecoding() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "41000000"), account: "user 7@example.com"))
            let response = try await client.send(.get, "/v1/accounts/user%207%40example.com/entitlements", key: TestData.readerKey)
            #expect(try response.json["account"] as? String == "user 7@example.com")
            #expect(member(try response.json, "entitledProductIds") as? [String] == [TestData.coins, TestData.pro])
            let bad = try await client.send(.get, "/v1/accounts/%01x/entitlements", key: TestData.readerKey)
            #expect(bad.status == .badRequest)
            #expect(bad.code == "invalid_account")
            let undecodable = try await client.send(.get, "/v1/accounts/%zz/entitlements", key: TestData.readerKey)
            #expect(undecodable.status == .badRequest)
            #expect(undecodable.code == "invalid_path_parameter")
        }
    }

    @Test("consumption is atomic, idempotent by key, and never goes below zero")
    func consumption() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        let consume = "/v1/accounts/dave/consumables/\(TestData.coins)/consume"
        try await app.testRouter { client in
            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "42000000"), account: "dave"))

            let first = try await client.send(.post, consume, key: TestData.fullKey, body: try TestData.json(["quantity": 2, "idempotencyKey": "order-1"]))
            #expect(first.status == .ok)
            #expect(try first.json["remaining"] as? Int == 3)
            #expect(try first.json["isReplay"] as? Bool == false)

            let replay = try await client.send(.post, consume, key: TestData.fullKey, body: try TestData.json(["quantity": 2, "idempotencyKey": "order-1"]))
            #expect(replay.status == .ok)
            #expect(try replay.json["isReplay"] as? Bool == true)
            #expect(try replay.json["remaining"] as? Int == 3)

            let reused = try await client.send(.post, consume, key: TestData.fullKey, body: try TestData.json(["quantity": 1, "idempotencyKey": "order-1"]))
            #expect(reused.status == .conflict)
            #expect(reused.code == "idempotency_key_reused")

            let tooMany = try await client.send(.post, consume, key: TestData.fullKey, body: try TestData.json(["quantity": 4, "idempotencyKey": "order-2"]))
            #expect(tooMany.status == .conflict)
            #expect(tooMany.code == "insufficient_balance")
            #expect(try tooMany.json["available"] as? Int == 3)

            let defaultQuantity = try await client.send(.post, consume, key: TestData.fullKey, body: try TestData.json(["idempotencyKey": "order-3"]))
            #expect(try defaultQuantity.json["remaining"] as? Int == 2)

            let entitlements = try await client.send(.get, "/v1/accounts/dave/entitlements", key: TestData.readerKey)
            let balance = member(product(try entitlements.json, "consumables", TestData.coins), "balance")
            #expect(member(balance, "consumed") as? Int == 3)
            #expect(member(balance, "available") as? Int == 2)
        }
    }

    static let badConsumptions: [(String, Int, String, String?)] = [
        (#"{"quantity": 0, "idempotencyKey": "k"}"#, 400, "invalid_field", "quantity"),
        (#"{"quantity": 2000000, "idempotencyKey": "k"}"#, 400, "invalid_field", "quantity"),
        (#"{"quantity": "1", "idempotencyKey": "k"}"#, 400, "invalid_field", "quantity"),
        (#"{"quantity": 1}"#, 400, "missing_field", "idempotencyKey"),
        (#"{"idempotencyKey": ""}"#, 400, "invalid_field", "idempotencyKey"),
        (#"{"idempotencyKey": "k", "account": "x"}"#, 400, "unknown_field", "account"),
    ]

    @Test("a malformed consumption is answered 400 naming the field", arguments: badConsumptions)
    func badConsumption(_ body: String, _ status: Int, _ code: String, _ field: String?) async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let response = try await client.send(.post, "/v1/accounts/dave/consumables/coins/consume", key: TestData.fullKey, body: ByteBuffer(string: body))
            #expect(response.status.code == status)
            #expect(response.code == code)
            #expect(try response.json["field"] as? String == field)
        }
    }

    @Test("consuming what the account never bought is refused with 409")
    func nothingToConsume() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let response = try await client.send(.post, "/v1/accounts/erin/consumables/\(TestData.coins)/consume", key: TestData.fullKey, body: try TestData.json(["idempotencyKey": "k"]))
            #expect(response.status == .conflict)
            #expect(response.code == "insufficient_balance")
            #expect(try response.json["available"] as? Int == 0)
        }
    }
}

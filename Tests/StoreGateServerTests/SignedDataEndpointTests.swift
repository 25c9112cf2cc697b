import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateServer
import StoreGateLedger

@Suite("POST /v1/transactions/verify")
struct TransactionEndpointTests {
    let path = "/v1/transactions/verify"

    @Test("a genuine signed transaction is verified, recorded and entitles the account")
    func verifiesAndRecords() async throws {
        let (app, ledger) = TestData.application(try TestData.configuration())
        let jws = try TestData.signedTransaction(transactionId: "2100000000000001")
        let renewal = try TestData.jwsMinter.mint(json: JWSPayloads.renewalInfo(
            signedDate: Date(), originalTransactionId: "2100000000000001", productId: TestData.monthly
        ))
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try TestData.json([
                "signedTransaction": jws, "signedRenewalInfo": renewal, "account": "bob",
                "expectations": ["productId": TestData.monthly, "transactionId": "2100000000000001"],
            ]))
            #expect(response.status == .ok)
            let json = try response.json
            #expect(json["kind"] as? String == "signed_transaction")
            #expect(json["environment"] as? String == "Test")
            #expect(member(json, "transaction", "transactionId") as? String == "2100000000000001")
            #expect(member(json, "renewalInfo", "autoRenewStatus") as? Int == 1)
            #expect(member(json, "recorded", "newTransactionIds") as? [String] == ["2100000000000001"])
            let subscriptions = try #require(member(json, "entitlements", "subscriptions") as? [[String: Any]])
            #expect(subscriptions.first?["state"] as? String == "active")
            #expect(subscriptions.first?["willAutoRenew"] as? Bool == true)
            #expect(try await ledger.transaction("2100000000000001", in: .test)?.account?.rawValue == "bob")
        }
    }

    static let refusals: [(String, Int, String)] = [
        ("tampered payload", 422, "signature_invalid"),
        ("other app", 422, "bundle_id_mismatch"),
        ("not a JWS", 422, "malformed_compact_serialization"),
        ("product expectation", 422, "product_mismatch"),
        ("transaction expectation", 422, "transaction_mismatch"),
        ("renewal of another subscription", 422, "renewal_info_mismatch"),
        ("alg none", 422, "unsupported_algorithm"),
    ]

    @Test("a signed transaction that fails verification is refused", arguments: refusals)
    func refused(_ name: String, _ status: Int, _ code: String) async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        let minter = try TestData.jwsMinter
        let genuine = try TestData.signedTransaction(transactionId: "2200000000000001")
        var body: [String: Any] = ["signedTransaction": genuine, "account": "bob"]
        switch name {
        case "tampered payload":
            var payload = JWSPayloads.transaction(bundleId: TestData.bundleId, signedDate: Date(), transactionId: "2200000000000001", productId: "com.example.storegate.lifetime")
            payload["type"] = "Non-Consumable"
            body["signedTransaction"] = JWSMinter.replacingPayload(of: genuine, with: try JWSMinter.json(payload))
        case "other app":
            body["signedTransaction"] = try TestData.signedTransaction(transactionId: "2200000000000002", bundleId: "com.example.other")
        case "not a JWS":
            body["signedTransaction"] = "not-a-jws"
        case "product expectation":
            body["expectations"] = ["productId": "com.example.storegate.yearly"]
        case "transaction expectation":
            body["expectations"] = ["transactionId": "1"]
        case "renewal of another subscription":
            body["signedRenewalInfo"] = try minter.mint(json: JWSPayloads.renewalInfo(signedDate: Date(), originalTransactionId: "999"))
        case "alg none":
            var header = minter.defaultHeader
            header.algorithm = "none"
            body["signedTransaction"] = try minter.mint(
                payload: try JWSMinter.json(JWSPayloads.transaction(bundleId: TestData.bundleId, signedDate: Date(), transactionId: "2200000000000003")),
                header: header, signature: .empty
            )
        default:
            Issue.record("unknown case \(name)")
        }
        let request = try TestData.json(body)
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: request)
            #expect(response.status.code == status)
            #expect(response.code == code)
            let entitlements = try await client.send(.get, "/v1/accounts/bob/entitlements", key: TestData.fullKey)
            #expect(member(try entitlements.json, "entitledProductIds") as? [String] == [])
        }
    }

    @Test("with several apps configured, a proof is checked against the app it names")
    func severalApps() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        let second = try TestData.signedTransaction(transactionId: "2400000000000001", bundleId: TestData.fixtureBundleId)
        let receipt = try TestData.receipt(bundleId: TestData.fixtureBundleId, transactionPrefix: "24100000")
        try await app.testRouter { client in
            let transaction = try await client.send(.post, path, key: TestData.fullKey, body: try TestData.json(["signedTransaction": second, "account": "bob"]))
            #expect(transaction.status == .ok)
            #expect(try transaction.json["bundleId"] as? String == TestData.fixtureBundleId)
            let verified = try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "bob"))
            #expect(verified.status == .ok)
            #expect(try verified.json["bundleId"] as? String == TestData.fixtureBundleId)
        }
    }

    @Test("a signed transaction another account recorded is refused with 409")
    func replay() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        let jws = try TestData.signedTransaction(transactionId: "2300000000000001")
        try await app.testRouter { client in
            #expect(try await client.send(.post, path, key: TestData.fullKey, body: try TestData.json(["signedTransaction": jws, "account": "bob"])).status == .ok)
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try TestData.json(["signedTransaction": jws, "account": "eve"]))
            #expect(response.status == .conflict)
            #expect(response.code == "owned_by_another_account")
        }
    }
}

@Suite("POST /v1/notifications/apple")
struct NotificationEndpointTests {
    let path = "/v1/notifications/apple"

    @Test("a REFUND is stored without an API key, revokes the purchase, and a second delivery changes nothing")
    func refundOnce() async throws {
        let (app, ledger) = TestData.application(try TestData.configuration())
        let receipt = try TestData.receipt(transactionPrefix: "31000000")
        let refund = try TestData.refund(transactionId: "3100000000000002")
        try await app.testRouter { client in
            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "carol"))
            let first = try await client.send(.post, path, body: try TestData.json(["signedPayload": refund]))
            #expect(first.status == .ok)
            #expect(try first.json["isDuplicate"] as? Bool == false)
            #expect(try first.json["notificationType"] as? String == "REFUND")
            let afterFirst = try await client.send(.get, "/v1/accounts/carol/entitlements", key: TestData.fullKey)
            #expect(product(try afterFirst.json, "nonConsumables", TestData.pro)?["isEntitled"] as? Bool == false)

            let second = try await client.send(.post, path, body: try TestData.json(["signedPayload": refund]))
            #expect(second.status == .ok)
            #expect(try second.json["isDuplicate"] as? Bool == true)
            let afterSecond = try await client.send(.get, "/v1/accounts/carol/entitlements", key: TestData.fullKey)
            #expect(try afterSecond.json["nonConsumables"] as? NSArray == afterFirst.json["nonConsumables"] as? NSArray)
            #expect(try await ledger.transaction("3100000000000002", in: .test)?.isRevoked == true)
        }
    }

    @Test("members Apple may add are ignored")
    func extraMembers() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        let refund = try TestData.refund(transactionId: "3200000000000002")
        try await app.testRouter { client in
            let response = try await client.send(.post, path, body: try TestData.json(["signedPayload": refund, "newMember": 1]))
            #expect(response.status == .ok)
        }
    }

    static let refusals: [(String, Int, String)] = [
        ("forged signature", 401, "signature_invalid"),
        ("foreign chain", 401, "chain_untrusted_root"),
        ("other app", 422, "bundle_id_mismatch"),
        ("garbage", 422, "malformed_compact_serialization"),
        ("missing signedPayload", 400, "missing_field"),
        ("not JSON", 400, "malformed_json"),
    ]

    @Test("a notification that is not authentic or not ours is refused, and nothing is stored", arguments: refusals)
    func refused(_ name: String, _ status: Int, _ code: String) async throws {
        let (app, ledger) = TestData.application(try TestData.configuration())
        let uuid = UUID().uuidString.lowercased()
        let genuine = try TestData.refund(transactionId: "3300000000000002", uuid: uuid)
        var body: ByteBuffer
        switch name {
        case "forged signature":
            let parts = genuine.split(separator: ".")
            var signature = try #require(Base64.decode(String(parts[2]), mode: .url))
            signature[5] ^= 0x01
            body = try TestData.json(["signedPayload": "\(parts[0]).\(parts[1]).\(Base64.encode(signature, url: true))"])
        case "foreign chain":
            let foreign = JWSMinter(authority: try TestCertificateAuthority(keyKind: .p256, shape: .init(label: "Foreign")))
            body = try TestData.json(["signedPayload": try foreign.mint(json: JWSPayloads.notification(type: "REFUND", bundleId: TestData.bundleId))])
        case "other app":
            body = try TestData.json(["signedPayload": try TestData.refund(transactionId: "3300000000000003", bundleId: "com.example.other")])
        case "garbage":
            body = try TestData.json(["signedPayload": "garbage"])
        case "missing signedPayload":
            body = try TestData.json(["payload": genuine])
        default:
            body = ByteBuffer(string: "signedPayload=\(genuine)")
        }
        let request = body
        try await app.testRouter { client in
            let response = try await client.send(.post, path, body: request)
            #expect(response.status.code == status)
            #expect(response.code == code)
            #expect(try await ledger.transaction("3300000000000002", in: .test) == nil)
        }
    }
}

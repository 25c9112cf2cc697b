import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

@testable import StoreGateServer
import StoreGateLedger

@Suite("POST /v1/receipts/verify")
struct ReceiptEndpointTests {
    let path = "/v1/receipts/verify"

    @Test("a genuine receipt is verified, recorded to the account, and its entitlements answered")
    func verifiesAndRecords() async throws {
        let (app, ledger) = TestData.application(try TestData.configuration())
        let receipt = try TestData.receipt(transactionPrefix: "11000000")
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "alice"))
            #expect(response.status == .ok)
            let json = try response.json
            #expect(json["verdict"] as? String == "valid")
            #expect(json["kind"] as? String == "app_receipt")
            #expect(json["environment"] as? String == "Test")
            #expect(json["bundleId"] as? String == TestData.bundleId)
            #expect(member(json, "receipt", "bundle_id") as? String == TestData.bundleId)
            #expect((member(json, "receipt", "in_app") as? [Any])?.count == 2)
            #expect(member(json, "recorded", "newTransactionIds") as? [String] == ["1100000000000001", "1100000000000002"])
            let entitlements = json["entitlements"]
            #expect(member(entitlements, "entitledProductIds") as? [String] == [TestData.coins, TestData.pro])
            #expect(member(product(entitlements, "consumables", TestData.coins), "balance", "available") as? Int == 5)
            #expect(product(entitlements, "nonConsumables", TestData.pro)?["isEntitled"] as? Bool == true)

            let again = try await client.send(.post, path, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "alice"))
            #expect(again.status == .ok)
            #expect(member(try again.json, "recorded", "isDuplicate") as? Bool == true)
            let recorded = try await ledger.transaction("1100000000000001", in: .test)
            #expect(recorded?.account?.rawValue == "alice")
        }
    }

    @Test("the same receipt redeemed by another account is refused with 409 and records nothing")
    func replayByAnotherAccount() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        let receipt = try TestData.receipt(transactionPrefix: "12000000")
        try await app.testRouter { client in
            try await client.send(.post, path, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "alice"))
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "mallory"))
            #expect(response.status == .conflict)
            #expect(response.code == "owned_by_another_account")
            let mallory = try await client.send(.get, "/v1/accounts/mallory/entitlements", key: TestData.fullKey)
            #expect(member(try mallory.json, "entitledProductIds") as? [String] == [])
        }
    }

    /// Proofs that must be refused with 422, and the code each gets.
    static let refusals: [(String, String)] = [
        ("forged", "signature_invalid"),
        ("other app", "bundle_id_mismatch"),
        ("not base64", "not_base64"),
        ("not a receipt", "malformed_pkcs7"),
        ("missing product", "product_not_found"),
        ("missing transaction", "transaction_not_found"),
        ("wrong version", "app_version_mismatch"),
        ("other device", "device_hash_mismatch"),
        ("foreign root", "chain_untrusted_root"),
    ]

    @Test("a receipt that fails verification is refused with 422, its code, step and field", arguments: refusals)
    func refused(_ name: String, _ code: String) async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        let genuine = try TestData.receipt(transactionPrefix: "13000000")
        var body: [String: Any] = ["receipt": Base64.encode(genuine), "account": "alice"]
        switch name {
        case "forged":
            var bytes = genuine
            let needle = Array(TestData.pro.utf8)
            let index = try #require(Self.index(of: needle, in: bytes))
            bytes[index + needle.count - 1] ^= 0x01
            body["receipt"] = Base64.encode(bytes)
        case "other app":
            body["receipt"] = Base64.encode(try TestData.receipt(bundleId: "com.example.other", transactionPrefix: "13100000"))
        case "not base64":
            body["receipt"] = "%%% not base64 %%%"
        case "not a receipt":
            body["receipt"] = Base64.encode(Array("hello, world".utf8))
        case "missing product":
            body["expectations"] = ["productId": "com.example.storegate.gems"]
        case "missing transaction":
            body["expectations"] = ["transactionId": "999"]
        case "wrong version":
            body["expectations"] = ["appVersion": "99"]
        case "other device":
            body["expectations"] = ["deviceId": UUID().uuidString]
        case "foreign root":
            let foreign = try TestCertificateAuthority(keyKind: .rsa2048, shape: .init(label: "Foreign"))
            var payload = ReceiptMinter.Payload()
            payload.bundleId = TestData.bundleId
            body["receipt"] = Base64.encode(try ReceiptMinter(authority: foreign).mint(payload))
        default:
            Issue.record("unknown case \(name)")
        }
        let request = try TestData.json(body)
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: request)
            #expect(response.status == .unprocessableContent)
            let json = try response.json
            #expect(json["code"] as? String == code)
            #expect(json["step"] is String)
            #expect((json["message"] as? String)?.isEmpty == false)
            let entitlements = try await client.send(.get, "/v1/accounts/alice/entitlements", key: TestData.fullKey)
            #expect(member(try entitlements.json, "entitledProductIds") as? [String] == [])
        }
    }

    @Test("a receipt from an environment not accepted is refused")
    func environmentNotAccepted() async throws {
        let (app, _) = TestData.application(try TestData.configuration(environments: [.production, .sandbox]))
        let receipt = try TestData.receipt(transactionPrefix: "14000000")
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "alice"))
            #expect(response.status == .unprocessableContent)
            #expect(response.code == "environment_not_accepted")
        }
    }

    @Test("a version outside the configured app versions is refused")
    func configuredVersions() async throws {
        let (app, _) = TestData.application(try TestData.configuration(apps: [.init(bundleId: TestData.bundleId, appVersions: ["41", "42"])]))
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try TestData.verifyBody(try TestData.receipt(), account: "alice"))
            #expect(response.status == .unprocessableContent)
            #expect(response.code == "app_version_mismatch")
        }
    }

    @Test("with no app configured every receipt is refused")
    func noApp() async throws {
        let (app, _) = TestData.application(try TestData.configuration(apps: []))
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try TestData.verifyBody(try TestData.receipt(), account: "alice"))
            #expect(response.status == .unprocessableContent)
            #expect(response.code == "bundle_id_not_accepted")
        }
    }

    @Test("the right device passes the device check")
    func deviceCheck() async throws {
        let device = UUID()
        var payload = ReceiptMinter.Payload()
        payload.bundleId = TestData.bundleId
        payload.creationDate = TestData.created
        payload.deviceIdentifier = DeviceIdentifier.identifierForVendor(device).bytes
        payload.purchases = [.init(productId: TestData.pro, transactionId: "1500000000000001", purchaseDate: TestData.created)]
        let receipt = try ReceiptMinter(authority: try TestData.receiptAuthority).mint(payload)
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let response = try await client.send(
                .post, path, key: TestData.fullKey,
                body: try TestData.verifyBody(receipt, account: "alice", expectations: ["deviceId": device.uuidString, "productId": TestData.pro])
            )
            #expect(response.status == .ok)
            let checks = try #require(try response.json["checks"] as? [[String: Any]])
            #expect(checks.first { $0["name"] as? String == "device_hash" }?["passed"] as? Bool == true)
        }
    }

    /// Malformed requests, and the field the 400 must name.
    static let malformed: [(String, String, String?)] = [
        ("{", "malformed_json", nil),
        ("[]", "malformed_json", nil),
        ("", "malformed_json", nil),
        (#"{"account": "alice"}"#, "missing_field", "receipt"),
        (#"{"receipt": "AAAA"}"#, "missing_field", "account"),
        (#"{"receipt": 42, "account": "alice"}"#, "invalid_field", "receipt"),
        (#"{"receipt": "AAAA", "account": ["alice"]}"#, "invalid_field", "account"),
        (#"{"receipt": "AAAA", "account": "alice", "expectations": {"productID": "x"}}"#, "unknown_field", "expectations.productID"),
        (#"{"receipt": "AAAA", "account": "alice", "extra": true}"#, "unknown_field", "extra"),
        (#"{"receipt": "AAAA", "account": "alice", "expectations": {"deviceId": "nope"}}"#, "invalid_field", "expectations.deviceId"),
        (#"{"receipt": "AAAA", "account": ""}"#, "invalid_account", "account"),
        (#"{"receipt": "AAAA", "account": "a\u0001b"}"#, "invalid_account", "account"),
    ]

    @Test("malformed JSON is answered 400 naming the field", arguments: malformed)
    func malformedRequest(_ body: String, _ code: String, _ field: String?) async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: ByteBuffer(string: body))
            #expect(response.status == .badRequest)
            let json = try response.json
            #expect(json["code"] as? String == code)
            #expect(json["field"] as? String == field)
        }
    }

    static func index(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard needle.count <= haystack.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }
}

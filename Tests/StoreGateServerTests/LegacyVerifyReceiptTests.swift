import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

@testable import StoreGateServer
import StoreGateLedger

@Suite("POST /verifyReceipt, the drop-in for Apple's legacy endpoint")
struct LegacyVerifyReceiptTests {
    let path = "/verifyReceipt"

    static func body(_ receipt: [UInt8]?, password: String? = nil, excludeOld: Bool? = nil) throws -> ByteBuffer {
        var object: [String: Any] = [:]
        if let receipt { object["receipt-data"] = Base64.encode(receipt) }
        if let password { object["password"] = password }
        if let excludeOld { object["exclude-old-transactions"] = excludeOld }
        return try TestData.json(object)
    }

    @Test("a genuine receipt gets status 0, the environment and the decoded receipt in Apple's shape")
    func valid() async throws {
        let (app, ledger) = TestData.application(try TestData.configuration())
        let receipt = try TestData.receipt(transactionPrefix: "51000000")
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try Self.body(receipt))
            #expect(response.status == .ok)
            let json = try response.json
            #expect(json["status"] as? Int == 0)
            #expect(json["environment"] as? String == "Test")
            #expect(member(json, "receipt", "bundle_id") as? String == TestData.bundleId)
            #expect(member(json, "receipt", "request_date_ms") is String)
            let inApp = try #require(member(json, "receipt", "in_app") as? [[String: Any]])
            #expect(inApp.map { $0["transaction_id"] as? String } == ["5100000000000001", "5100000000000002"])
            #expect(inApp.first?["quantity"] as? String == "5")
            #expect(json["latest_receipt_info"] == nil)
            #expect(json["pending_renewal_info"] == nil)
            #expect(try await ledger.transaction("5100000000000001", in: .test) == nil, "the drop-in records nothing")
            // The same writer as a reply from Apple written back: the client reads the drop-in's
            // reply and writes it again byte for byte.
            let body = Array(response.body.readableBytesView)
            #expect(try VerifyReceiptResponse.decode(body).jsonBytes() == body)
        }
    }

    /// Requests and the status Apple's endpoint would give them.
    static let statuses: [(String, Int)] = [
        ("no receipt-data", 21002),
        ("not JSON", 21002),
        ("receipt-data not base64", 21002),
        ("not a receipt", 21002),
        ("forged", 21003),
        ("another app", 21003),
        ("signed by an untrusted root", 21003),
        ("a test-anchor receipt while only production is accepted", 21003),
    ]

    @Test("refusals are answered with Apple's status codes and HTTP 200", arguments: statuses)
    func statusCodes(_ name: String, _ status: Int) async throws {
        var configuration = try TestData.configuration()
        var body = try Self.body(try TestData.receipt(transactionPrefix: "52000000"))
        switch name {
        case "no receipt-data": body = try TestData.json(["password": "x"])
        case "not JSON": body = ByteBuffer(string: "receipt-data=abc")
        case "receipt-data not base64": body = try TestData.json(["receipt-data": "***"])
        case "not a receipt": body = try Self.body(Array("not a receipt".utf8))
        case "forged":
            var bytes = try TestData.receipt(transactionPrefix: "52000000")
            bytes[bytes.count - 10] ^= 0x01
            body = try Self.body(bytes)
        case "another app": body = try Self.body(try TestData.receipt(bundleId: "com.example.other"))
        case "signed by an untrusted root":
            let foreign = try TestCertificateAuthority(keyKind: .rsa2048, shape: .init(label: "Foreign"))
            var payload = ReceiptMinter.Payload()
            payload.bundleId = TestData.bundleId
            body = try Self.body(try ReceiptMinter(authority: foreign).mint(payload))
        default: configuration.environments = [.production]
        }
        let (app, _) = TestData.application(configuration)
        let request = body
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: request)
            #expect(response.status == .ok)
            #expect(try response.json["status"] as? Int == status)
            #expect(try response.json["receipt"] == nil)
        }
    }

    /// Apple-signed receipts (only Apple's own are Production or Sandbox: a test anchor
    /// always reports Test), the one environment accepted, and Apple's status for the pair.
    static let environmentMismatches: [(String, AppStoreEnvironment, Int)] = [
        ("receipts/inapppurchase-ios-production-2015-sha1-noiap.der", .sandbox, 21008),
        ("receipts/revenuecat-ios-sandbox-2020-sha1-9iap.der", .production, 21007),
        ("receipts/revenuecat-ios-sandbox-2020-sha1-9iap.der", .sandbox, 0),
    ]

    @Test(
        "a receipt from the environment not accepted gets 21007 (sandbox) or 21008 (production)",
        .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)),
        arguments: environmentMismatches
    )
    func environmentMismatch(_ fixture: String, _ accepted: AppStoreEnvironment, _ status: Int) async throws {
        let der = try #require(Fixtures.bytes(fixture))
        let bundleId = try UnverifiedReceiptBundle.bundleId(der)
        var configuration = try TestData.configuration(apps: [.init(bundleId: bundleId)], environments: [accepted])
        configuration.trustStore = TrustStore()
        let (app, _) = TestData.application(configuration)
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try Self.body(der))
            #expect(try response.json["status"] as? Int == status)
        }
    }

    @Test("with a shared secret: the password authenticates without a key, a wrong one is 21004")
    func sharedSecret() async throws {
        var configuration = try TestData.configuration()
        configuration.sharedSecret = SharedSecret("0123456789abcdef0123456789abcdef")
        let (app, _) = TestData.application(configuration)
        let receipt = try TestData.receipt(transactionPrefix: "53000000")
        try await app.testRouter { client in
            let right = try await client.send(.post, path, body: try Self.body(receipt, password: "0123456789abcdef0123456789abcdef"))
            #expect(try right.json["status"] as? Int == 0)
            let wrong = try await client.send(.post, path, body: try Self.body(receipt, password: "0123456789abcdef0123456789abcdee"))
            #expect(try wrong.json["status"] as? Int == 21004)
            let missing = try await client.send(.post, path, body: try Self.body(receipt))
            #expect(try missing.json["status"] as? Int == 21004)
            let keyButWrongPassword = try await client.send(.post, path, key: TestData.fullKey, body: try Self.body(receipt, password: "nope"))
            #expect(try keyButWrongPassword.json["status"] as? Int == 21004)
            let keyOnly = try await client.send(.post, path, key: TestData.fullKey, body: try Self.body(receipt))
            #expect(try keyOnly.json["status"] as? Int == 0)
        }
    }

    @Test("without a shared secret a key is required: 401 without, 403 without the permission")
    func authentication() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        let receipt = try TestData.receipt(transactionPrefix: "54000000")
        try await app.testRouter { client in
            let anonymous = try await client.send(.post, path, body: try Self.body(receipt, password: "anything"))
            #expect(anonymous.status == .unauthorized)
            #expect(anonymous.code == "unauthorized")
            let reader = try await client.send(.post, path, key: TestData.readerKey, body: try Self.body(receipt))
            #expect(reader.status == .forbidden)
            let wrongKey = try await client.send(.post, path, key: "wrong-key-0123456789abcdef", body: try Self.body(receipt))
            #expect(wrongKey.status == .unauthorized)
        }
    }

    @Test("GET gets Apple's 21000; other methods 405")
    func notPost() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let get = try await client.send(.get, path)
            #expect(get.status == .ok)
            #expect(try get.json["status"] as? Int == 21000)
            for method in [HTTPRequest.Method.put, .delete, .patch] {
                let response = try await client.send(method, path)
                #expect(response.status == .methodNotAllowed)
                #expect(response.headers[.allow] == "GET, HEAD, POST")
            }
        }
    }

    @Test("subscriptions are listed in latest_receipt_info, oldest first, or only the newest of each with exclude-old-transactions")
    func latestReceiptInfo() async throws {
        let start = TestData.created.addingTimeInterval(-86_400 * 90)
        let purchases: [ReceiptMinter.Purchase] = (0..<3).map { month in
            let purchased = start.addingTimeInterval(Double(month) * 86_400 * 30)
            return ReceiptMinter.Purchase(
                productId: TestData.monthly, transactionId: "550000000000000\(month)", purchaseDate: purchased,
                originalTransactionId: "5500000000000000", subscriptionExpirationDate: purchased.addingTimeInterval(86_400 * 30)
            )
        }.reversed()
        let receipt = try TestData.receipt(purchases: Array(purchases))
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let all = try await client.send(.post, path, key: TestData.fullKey, body: try Self.body(receipt))
            let info = try #require(try all.json["latest_receipt_info"] as? [[String: Any]])
            #expect(info.map { $0["transaction_id"] as? String } == ["5500000000000000", "5500000000000001", "5500000000000002"])
            #expect(try all.json["latest_receipt"] as? String == Base64.encode(receipt))
            let newest = try await client.send(.post, path, key: TestData.fullKey, body: try Self.body(receipt, excludeOld: true))
            let latest = try #require(try newest.json["latest_receipt_info"] as? [[String: Any]])
            #expect(latest.map { $0["transaction_id"] as? String } == ["5500000000000002"])
        }
    }

    @Test(
        "Apple's real sandbox receipt gets the same in-app entries as Apple's own verifyReceipt reply",
        .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage))
    )
    func realFixture() async throws {
        let der = try #require(Fixtures.bytes("receipts/revenuecat-ios-sandbox-2020-sha1-9iap.der"))
        let apple = try #require(Fixtures.bytes("verifyreceipt/revenuecat-verifyreceipt-sandbox-2020.json"))
        var configuration = try TestData.configuration()
        configuration.trustStore = TrustStore()
        let (app, _) = TestData.application(configuration)
        try await app.testRouter { client in
            let response = try await client.send(.post, path, key: TestData.fullKey, body: try Self.body(der))
            try Self.expectSameInApp(response, appleReply: apple)
        }
    }

    /// Compares the reply's `receipt` (every member Apple sent, but `request_date*`) and
    /// `receipt.in_app` (entry by entry, by transaction id) with Apple's reply.
    static func expectSameInApp(_ response: TestResponse, appleReply: [UInt8]) throws {
        let ours = try response.json
        let theirs = try #require(try JSONSerialization.jsonObject(with: Data(appleReply)) as? [String: Any])
        #expect(ours["status"] as? Int == 0)
        #expect(ours["environment"] as? String == theirs["environment"] as? String)
        let ourReceipt = try #require(ours["receipt"] as? [String: Any])
        let theirReceipt = try #require(theirs["receipt"] as? [String: Any])
        for (key, value) in theirReceipt where key != "in_app" && !key.hasPrefix("request_date") {
            #expect("\(ourReceipt[key] ?? "absent")" == "\(value)", "receipt.\(key)")
        }
        let ourEntries = try #require(ourReceipt["in_app"] as? [[String: Any]])
        let theirEntries = try #require(theirReceipt["in_app"] as? [[String: Any]])
        #expect(ourEntries.count == theirEntries.count)
        for theirEntry in theirEntries {
            let id = try #require(theirEntry["transaction_id"] as? String)
            let ourEntry = try #require(ourEntries.first { $0["transaction_id"] as? String == id }, "in_app \(id)")
            for (key, value) in theirEntry {
                #expect("\(ourEntry[key] ?? "absent")" == "\(value)", "in_app[\(id)].\(key)")
            }
            for key in ourEntry.keys {
                #expect(theirEntry[key] != nil, "in_app[\(id)].\(key) is not in Apple's reply")
            }
        }
    }
}

/// Reads a receipt's bundle id without verifying it (test set-up only).
enum UnverifiedReceiptBundle {
    static func bundleId(_ der: [UInt8]) throws -> String {
        try UnverifiedReceipt(der: der).receipt.bundleId
    }
}

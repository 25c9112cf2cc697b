import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing
import X509

/// `storegate verify --json` and the text report: every proof kind, minted by the test CA so
/// the tests hold without ../shared.
@Suite("storegate verify: decoded proofs and step details")
struct VerifyJSONTests {
    static let bundleId = "com.example.storegate"

    /// A trust directory holding `authority`'s root, and the proof written beside it.
    static func files(_ proof: [UInt8], name: String, authority: TestCertificateAuthority) throws -> (proof: URL, trust: URL) {
        let file = try CLI.temporaryFile(proof, name: name)
        let trust = file.deletingLastPathComponent().appendingPathComponent("trust")
        try FileManager.default.createDirectory(at: trust, withIntermediateDirectories: true)
        try Data(authority.root.der).write(to: trust.appendingPathComponent("test-root.der"))
        return (file, trust)
    }

    static func object(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not one JSON object: \(text)")
    }

    /// Every step passed and says what it checked.
    static func expectDetailedSteps(_ json: [String: Any], count: Int) throws {
        let steps = try #require(json["steps"] as? [[String: Any]])
        #expect(steps.count == count)
        for step in steps {
            #expect(step["status"] as? String == "passed", "\(step)")
            #expect(!((step["detail"] as? String) ?? "").isEmpty, "a step without its detail: \(step)")
        }
    }

    @Test("a receipt's JSON carries the decoded receipt in Apple's verifyReceipt names next to the verdict and steps")
    func receipt() async throws {
        let authority = try TestCertificateAuthority.shared(.rsa2048)
        var payload = ReceiptMinter.Payload()
        payload.bundleId = Self.bundleId
        payload.appVersion = "42"
        payload.purchases = [.init(productId: "coins", transactionId: "7001", purchaseDate: Date(timeIntervalSince1970: 1_699_000_000), quantity: 3)]
        let (file, trust) = try Self.files(try ReceiptMinter(authority: authority).mint(payload), name: "receipt.der", authority: authority)
        let result = try await CLI.run(["verify", file.path, "--bundle-id", Self.bundleId, "--environment", "test", "--trust-dir", trust.path, "--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let json = try Self.object(result.stdout)
        #expect(json["valid"] as? Bool == true)
        try Self.expectDetailedSteps(json, count: 7)
        let receipt = try #require(json["receipt"] as? [String: Any])
        #expect(receipt["bundle_id"] as? String == Self.bundleId)
        #expect(receipt["application_version"] as? String == "42")
        let purchase = try #require((receipt["in_app"] as? [[String: Any]])?.first)
        #expect(purchase["transaction_id"] as? String == "7001")
        #expect(purchase["quantity"] as? String == "3")
        // The chain line names every certificate and the anchor's fingerprint.
        let text = try await CLI.run(["verify", file.path, "--bundle-id", Self.bundleId, "--environment", "test", "--trust-dir", trust.path])
        #expect(text.stdout.contains(authority.root.fingerprint.description))
        #expect(text.stdout.contains(authority.leaf.certificate.subject.description))
    }

    struct JWSCase: Sendable, CustomTestStringConvertible {
        let kind: String
        let expectedKind: String
        let member: String
        let value: String
        var testDescription: String { kind }
    }

    static func mintJWS(_ kind: String) throws -> String {
        let minter = try JWSMinter.shared()
        switch kind {
        case "renewal-info":
            return try minter.mint(json: JWSPayloads.renewalInfo())
        case "app-transaction":
            return try minter.mint(json: JWSPayloads.appTransaction())
        case "notification":
            let transaction = try minter.mint(json: JWSPayloads.transaction())
            let renewal = try minter.mint(json: JWSPayloads.renewalInfo())
            return try minter.mint(json: JWSPayloads.notification(signedTransactionInfo: transaction, signedRenewalInfo: renewal))
        default:
            return try minter.mint(json: JWSPayloads.transaction())
        }
    }

    @Test("each JWS kind: the JSON carries its payload, and every text line its detail", arguments: [
        JWSCase(kind: "transaction", expectedKind: "signed_transaction", member: "transactionId", value: "2000000100000001"),
        JWSCase(kind: "renewal-info", expectedKind: "signed_renewal_info", member: "autoRenewProductId", value: "com.example.storegate.monthly"),
        JWSCase(kind: "app-transaction", expectedKind: "app_transaction", member: "appTransactionId", value: "704000000000000001"),
        JWSCase(kind: "notification", expectedKind: "notification", member: "notificationType", value: "DID_RENEW"),
    ])
    func jws(_ test: JWSCase) async throws {
        let authority = try TestCertificateAuthority.shared(.p256)
        let (file, trust) = try Self.files(Array(try Self.mintJWS(test.kind).utf8), name: "\(test.kind).jws", authority: authority)
        let arguments = ["verify", file.path, "--bundle-id", Self.bundleId, "--environment", "test", "--trust-dir", trust.path]
        let result = try await CLI.run(arguments + ["--json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        let json = try Self.object(result.stdout)
        #expect(json["valid"] as? Bool == true)
        #expect(json["kind"] as? String == test.expectedKind)
        try Self.expectDetailedSteps(json, count: 6)
        let checks = try #require(json["checks"] as? [[String: Any]])
        #expect(checks.map { $0["name"] as? String } == ["bundle_id", "environment", "app_apple_id", "max_age", "nested_data", "product", "transaction"])
        let payload = try #require(json["payload"] as? [String: Any])
        #expect(payload[test.member] as? String == test.value)
        if test.kind == "notification" {
            let nested = try #require(json["nested"] as? [String: Any])
            #expect(Set(nested.keys) == ["signedTransactionInfo", "signedRenewalInfo"])
        }
        let text = try await CLI.run(arguments)
        let lines = text.stdout.split(separator: "\n").filter { $0.hasPrefix("PASS") }
        #expect(lines.count == 6)
        for line in lines {
            #expect(line.count > 20, "a step line without its detail: \(line)")
        }
        #expect(text.stdout.contains("ES256"))
        #expect(text.stdout.contains(authority.root.fingerprint.description))
        #expect(text.stdout.contains(authority.intermediate.certificate.subject.description))
    }

    @Test("a JWS failing its expectations still reports the chain it validated, and its payload marked invalid")
    func failedExpectations() async throws {
        let authority = try TestCertificateAuthority.shared(.p256)
        let (file, trust) = try Self.files(Array(try Self.mintJWS("transaction").utf8), name: "t.jws", authority: authority)
        let result = try await CLI.run(["verify", file.path, "--bundle-id", Self.bundleId, "--environment", "test", "--trust-dir", trust.path,
                                        "--product-id", "com.example.other", "--json"])
        #expect(result.status == 1)
        let json = try Self.object(result.stdout)
        #expect(json["valid"] as? Bool == false)
        #expect((json["error"] as? [String: Any])?["code"] as? String == "product_mismatch")
        let steps = try #require(json["steps"] as? [[String: Any]])
        let chain = try #require(steps.first { $0["step"] as? String == "chain" })
        #expect(chain["status"] as? String == "passed")
        #expect((chain["detail"] as? String)?.contains(authority.root.fingerprint.description) == true)
        #expect((json["payload"] as? [String: Any])?["productId"] as? String == "com.example.storegate.monthly")
        // Every expectation check, as for receipts: the product failed, the bundle id held.
        let checks = try #require(json["checks"] as? [[String: Any]])
        #expect(checks.first { $0["name"] as? String == "product" }?["passed"] as? Bool == false)
        #expect(checks.first { $0["name"] as? String == "bundle_id" }?["passed"] as? Bool == true)
        #expect(checks.first { $0["name"] as? String == "max_age" }?["passed"] == nil)
    }

    @Test("verify --remote --json prints one JSON document holding both verdicts")
    func remoteIsOneDocument() async throws {
        let authority = try TestCertificateAuthority.shared(.rsa2048)
        var payload = ReceiptMinter.Payload()
        payload.bundleId = Self.bundleId
        payload.purchases = [.init(productId: "coins", transactionId: "7002", purchaseDate: Date(timeIntervalSince1970: 1_699_000_000))]
        let receipt = try ReceiptMinter(authority: authority).mint(payload)
        let (file, trust) = try Self.files(receipt, name: "receipt.der", authority: authority)
        try await AppleStandIn.run { standIn in
            let created = Date(timeIntervalSince1970: 1_699_000_000)
            standIn.registerReceipt(Base64.encode(receipt), environment: .sandbox, reply: VerifyReceiptResponse(
                status: .valid, environment: .sandbox,
                receipt: VerifyReceiptReceipt(
                    receiptType: "ProductionSandbox", bundleId: Self.bundleId, applicationVersion: "1", originalApplicationVersion: "1",
                    receiptCreationDate: created, requestDate: created,
                    inApp: [VerifyReceiptTransaction(quantity: 1, productId: "coins", transactionId: "7002", originalTransactionId: "7002", purchaseDate: created)])))
            let result = try await CLI.run([
                "verify", file.path, "--bundle-id", Self.bundleId, "--environment", "test", "sandbox", "--trust-dir", trust.path,
                "--remote", "--apple-endpoint", standIn.baseURL, "--json",
            ])
            let json = try Self.object(result.stdout)
            #expect(json["valid"] as? Bool == true, "offline: \(result.stdout)")
            let remote = try #require(json["remote"] as? [String: Any])
            #expect(remote["valid"] as? Bool == true)
            #expect((remote["route"] as? [[String: Any]])?.last?["status"] as? Int == 0)
            // A test anchor's receipt never agrees with Apple's Sandbox reply: combined, invalid.
            #expect(json["overall_valid"] as? Bool == false)
            #expect(result.status == 1)
            #expect(json["receipt"] != nil)
        }
    }
}

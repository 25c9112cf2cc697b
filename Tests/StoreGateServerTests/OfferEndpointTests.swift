import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import StoreGateCore
import StoreGateLedger
import StoreGateOffers
import Testing

@testable import StoreGateServer

/// `POST /v1/offers/sign` (issue 33 item 4): each kind signed with the configured key, the
/// eligibility policy decided from the ledger, and every refusal typed.
@Suite("Offer signing through the service")
struct OfferEndpointTests {
    static let signerKey = "offers-key-0123456789abcdef"
    static let privateKey = P256.Signing.PrivateKey()

    static func configuration(policy: OfferEligibilityPolicy = .any, key: Bool = true) throws -> ServerConfiguration {
        var configuration = try TestData.configuration(apps: [.init(bundleId: TestData.bundleId)])
        if key {
            configuration.offerSigningKey = try OfferSigningKey(keyId: "OFFERKEY01", issuerId: "57246542-96fe-1a63-e053-0824d011072a", privateKey: privateKey)
        }
        configuration.offerEligibility = policy
        var keys = configuration.apiKeys
        try keys.add(name: "app-backend", secret: signerKey, permissions: [.offersSign])
        configuration.apiKeys = keys
        return configuration
    }

    /// The JWS's payload, after checking its ES256 signature with the configured key.
    static func verifiedClaims(_ compact: String) throws -> [String: Any] {
        let parts = compact.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        let signatureBytes = try #require(Base64.decode(parts[2], mode: .url))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: signatureBytes)
        #expect(privateKey.publicKey.isValidSignature(signature, for: Data("\(parts[0]).\(parts[1])".utf8)))
        let headerBytes = try #require(Base64.decode(parts[0], mode: .url))
        let payloadBytes = try #require(Base64.decode(parts[1], mode: .url))
        let header = try #require(try JSONSerialization.jsonObject(with: Data(headerBytes)) as? [String: Any])
        #expect(header["alg"] as? String == "ES256" && header["kid"] as? String == "OFFERKEY01")
        return try #require(try JSONSerialization.jsonObject(with: Data(payloadBytes)) as? [String: Any])
    }

    @Test("each kind is signed with the configured key: the StoreKit 1 signature verifies over Apple's string, the JWS carry their claims")
    func signsEachKind() async throws {
        let (app, _) = TestData.application(try Self.configuration())
        try await app.testRouter { client in
            let v1 = try await client.send(.post, "/v1/offers/sign", key: Self.signerKey, body: try TestData.json([
                "kind": "promotional_offer_v1", "productId": TestData.monthly, "offerIdentifier": "winback-50", "applicationUsername": "3F2504E0-4F89-11D3-9A0C-0305E82C3301",
            ]))
            #expect(v1.status == .ok)
            #expect(try v1.json["kind"] as? String == "promotional_offer_v1")
            let values = try #require(try v1.json["signature"] as? [String: Any])
            let nonce = try #require(values["nonce"] as? String)
            let timestamp = try #require(values["timestamp"] as? Int)
            #expect(values["applicationUsername"] as? String == "3f2504e0-4f89-11d3-9a0c-0305e82c3301")
            let signed = [TestData.bundleId, "OFFERKEY01", TestData.monthly, "winback-50", "3f2504e0-4f89-11d3-9a0c-0305e82c3301", nonce, String(timestamp)]
                .joined(separator: "\u{2063}")
            let encoded = try #require(values["encodedSignature"] as? String)
            let der = try #require(Data(base64Encoded: encoded))
            #expect(Self.privateKey.publicKey.isValidSignature(try P256.Signing.ECDSASignature(derRepresentation: der), for: Data(signed.utf8)))
            #expect(!Self.privateKey.publicKey.isValidSignature(try P256.Signing.ECDSASignature(derRepresentation: der), for: Data((signed + "0").utf8)))

            let v2 = try await client.send(.post, "/v1/offers/sign", key: Self.signerKey, body: try TestData.json([
                "kind": "promotional_offer_v2", "productId": TestData.monthly, "offerIdentifier": "winback-50", "transactionId": "2000000000000001",
            ]))
            #expect(v2.status == .ok)
            let claims = try Self.verifiedClaims(try #require(try v2.json["signature"] as? String))
            #expect(claims["aud"] as? String == "promotional-offer")
            #expect(claims["bid"] as? String == TestData.bundleId)
            #expect(claims["productId"] as? String == TestData.monthly && claims["offerIdentifier"] as? String == "winback-50")
            #expect(claims["transactionId"] as? String == "2000000000000001")

            let intro = try await client.send(.post, "/v1/offers/sign", key: Self.signerKey, body: try TestData.json([
                "kind": "introductory_offer_eligibility", "productId": TestData.monthly, "allowIntroductoryOffer": false, "transactionId": "2000000000000001",
            ]))
            let introClaims = try Self.verifiedClaims(try #require(try intro.json["signature"] as? String))
            #expect(introClaims["aud"] as? String == "introductory-offer-eligibility")
            #expect(introClaims["allowIntroductoryOffer"] as? Bool == false)

            let commerce = try await client.send(.post, "/v1/offers/sign", key: Self.signerKey, body: try TestData.json([
                "kind": "advanced_commerce_in_app_request", "request": #"{"operation":"CREATE_SUBSCRIPTION","version":"1"}"#,
            ]))
            let commerceClaims = try Self.verifiedClaims(try #require(try commerce.json["signature"] as? String))
            #expect(commerceClaims["aud"] as? String == "advanced-commerce-api")
            let requestText = try #require(commerceClaims["request"] as? String)
            let request = try #require(Data(base64Encoded: requestText))
            #expect(String(decoding: request, as: UTF8.self) == #"{"operation":"CREATE_SUBSCRIPTION","version":"1"}"#)
        }
    }

    static var refusals: [(String, [String: Any], HTTPResponse.Status, String)] {
        [
        ("unknown kind", ["kind": "promotional_offer_v3", "productId": "p"], .badRequest, "invalid_field"),
        ("no kind", ["productId": "p"], .badRequest, "missing_field"),
        ("no offer", ["kind": "promotional_offer_v2", "productId": "p"], .badRequest, "missing_field"),
        ("another kind's member", ["kind": "promotional_offer_v2", "productId": "p", "offerIdentifier": "o", "allowIntroductoryOffer": true], .badRequest, "unknown_field"),
        ("unknown member", ["kind": "promotional_offer_v2", "productId": "p", "offerIdentifier": "o", "price": 1], .badRequest, "unknown_field"),
        ("allow as a string", ["kind": "introductory_offer_eligibility", "productId": "p", "transactionId": "1", "allowIntroductoryOffer": "yes"], .badRequest, "invalid_field"),
        ("request not an object", ["kind": "advanced_commerce_in_app_request", "request": "[1,2]"], .badRequest, "invalid_field"),
        ("other app", ["kind": "promotional_offer_v2", "productId": "p", "offerIdentifier": "o", "bundleId": "com.example.other"], .unprocessableContent, "bundle_id_not_accepted"),
        ("bad account", ["kind": "promotional_offer_v2", "productId": "p", "offerIdentifier": "o", "account": ""], .badRequest, "invalid_account"),
        ]
    }

    @Test("malformed requests are refused with their code; nothing is signed", arguments: 0..<9)
    func refused(_ index: Int) async throws {
        try #require(Self.refusals.count == 9)
        let (name, body, status, code) = Self.refusals[index]
        let (app, _) = TestData.application(try Self.configuration())
        let bytes = try TestData.json(body)
        try await app.testRouter { client in
            let reply = try await client.send(.post, "/v1/offers/sign", key: Self.signerKey, body: bytes)
            #expect(reply.status == status, "\(name)")
            #expect(try reply.json["code"] as? String == code, "\(name)")
            #expect(try reply.json["signature"] == nil)
        }
    }

    @Test("without a key: 409 offers_not_configured; without the permission: 403; without a key header: 401")
    func access() async throws {
        let (unconfigured, _) = TestData.application(try Self.configuration(key: false))
        let body = try TestData.json(["kind": "promotional_offer_v2", "productId": "p", "offerIdentifier": "o"])
        try await unconfigured.testRouter { client in
            let reply = try await client.send(.post, "/v1/offers/sign", key: Self.signerKey, body: body)
            #expect(reply.status == .conflict)
            #expect(try reply.json["code"] as? String == "offers_not_configured")
        }
        let (app, _) = TestData.application(try Self.configuration())
        try await app.testRouter { client in
            let forbidden = try await client.send(.post, "/v1/offers/sign", key: TestData.readerKey, body: body)
            #expect(forbidden.status == .forbidden)
            let anonymous = try await client.send(.post, "/v1/offers/sign", body: body)
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test("subscribers: a promotional offer only for an account that held the group; lapsed: only when not subscribed now; other kinds unaffected")
    func eligibility() async throws {
        for policy in [OfferEligibilityPolicy.subscribers, .lapsed] {
            let (app, _) = TestData.application(try Self.configuration(policy: policy))
            try await app.testRouter { client in
                func record(_ account: String, _ transactionId: String, signedDate: Date) async throws {
                    let reply = try await client.send(.post, "/v1/transactions/verify", key: TestData.fullKey, body: try TestData.json([
                        "signedTransaction": try TestData.signedTransaction(transactionId: transactionId, signedDate: signedDate), "account": account,
                    ]))
                    #expect(reply.status == .ok)
                }
                try await record("current", "2300000000000001", signedDate: Date())
                try await record("former", "2300000000000002", signedDate: Date(timeIntervalSinceNow: -90 * 86_400))
                func sign(_ account: String?) async throws -> (HTTPResponse.Status, String?) {
                    var body: [String: Any] = ["kind": "promotional_offer_v2", "productId": TestData.monthly, "offerIdentifier": "winback"]
                    if let account { body["account"] = account }
                    let reply = try await client.send(.post, "/v1/offers/sign", key: Self.signerKey, body: try TestData.json(body))
                    return (reply.status, try reply.json["code"] as? String)
                }
                #expect(try await sign("former").0 == .ok, "\(policy)")
                #expect(try await sign("never") == (.unprocessableContent, "offer_ineligible"), "\(policy)")
                #expect(try await sign(nil) == (.unprocessableContent, "offer_ineligible"), "\(policy)")
                let current = try await sign("current")
                #expect(current.0 == (policy == .lapsed ? .unprocessableContent : .ok), "\(policy)")
                let intro = try await client.send(.post, "/v1/offers/sign", key: Self.signerKey, body: try TestData.json([
                    "kind": "introductory_offer_eligibility", "productId": TestData.monthly, "allowIntroductoryOffer": true, "transactionId": "1", "account": "never",
                ]))
                #expect(intro.status == .ok, "\(policy)")
            }
        }
    }

    @Test("STOREGATE_OFFER_* load the key (never printed) and the policy; bad values stop start-up naming the setting")
    func settings() throws {
        let pem = Self.privateKey.pemRepresentation
        let loaded = try ServerConfiguration.load(environment: [
            "STOREGATE_BUNDLE_IDS": TestData.bundleId, "STOREGATE_OFFER_KEY_ID": "OFFERKEY01", "STOREGATE_OFFER_PRIVATE_KEY": pem, "STOREGATE_OFFER_ELIGIBILITY": "lapsed",
        ])
        #expect(loaded.offerSigningKey?.keyId == "OFFERKEY01")
        #expect(loaded.offerEligibility == .lapsed)
        #expect(!"\(loaded)".contains("PRIVATE KEY") && !"\(String(describing: loaded.offerSigningKey))".contains("PRIVATE KEY"))
        #expect(try ServerConfiguration.load(environment: ["STOREGATE_BUNDLE_IDS": TestData.bundleId]).offerSigningKey == nil)
        let policy = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration.load(environment: ["STOREGATE_BUNDLE_IDS": TestData.bundleId, "STOREGATE_OFFER_ELIGIBILITY": "everyone"])
        }
        #expect(policy.setting == "STOREGATE_OFFER_ELIGIBILITY")
        let missing = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration.load(environment: ["STOREGATE_BUNDLE_IDS": TestData.bundleId, "STOREGATE_OFFER_KEY_ID": "OFFERKEY01"])
        }
        #expect(missing.setting == "STOREGATE_OFFER_KEY_ID")
        let garbage = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration.load(environment: ["STOREGATE_BUNDLE_IDS": TestData.bundleId, "STOREGATE_OFFER_KEY_ID": "K", "STOREGATE_OFFER_PRIVATE_KEY": "not a key"])
        }
        #expect(!garbage.description.contains("not a key"))
    }
}

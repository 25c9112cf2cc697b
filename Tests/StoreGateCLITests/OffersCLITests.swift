import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateTestSupport
import Testing

/// `storegate offers sign …`: each kind signs from a key file or the environment and prints
/// `{kind, signature}`; the key never reaches the output; unusable input exits 2.
/// (Scripts/crosscheck_offers.py checks the signatures against Apple's own library.)
@Suite("storegate offers sign")
struct OffersCLITests {
    /// A fresh key in a .p8 file, and its PEM text.
    static func keyFile() throws -> (path: String, pem: String) {
        let (credentials, _) = AppleStandIn.ServerAPIAccount.makeTestPair()
        let pem = AppleStandIn.privateKeyPEM(of: credentials)
        return (try TemporaryFiles.file(Array(pem.utf8), name: "SubscriptionKey_OFFER.p8", prefix: "cli-offers").path, pem)
    }

    static let common = ["--key-id", "OFFERKEY01", "--issuer-id", "57246542-96fe-1a63-e053-0824d011072a", "--bundle-id", "com.example.storegate"]

    static func json(_ text: String) throws -> JSONObject {
        try JSONReader.readObject(Array(text.utf8)).get()
    }

    static func claims(_ jws: JSONValue?) throws -> JSONObject {
        guard case .string(let compact)? = jws else { throw CLIError("no JWS") }
        let parts = compact.split(separator: ".")
        try #require(parts.count == 3)
        return try JSONReader.readObject(try #require(Base64.decode(parts[1], mode: .url))).get()
    }

    struct CLIError: Error { let text: String; init(_ text: String) { self.text = text } }

    @Test("each kind is signed from a key file and printed as {kind, signature}, the key nowhere in the output")
    func everyKind() async throws {
        let (path, pem) = try Self.keyFile()
        let request = try TemporaryFiles.file(Array(#"{"operation": "REACTIVATE_SUBSCRIPTION", "version": "1"}"#.utf8), name: "request.json", prefix: "cli-offers")
        let cases: [(arguments: [String], kind: String, audience: String?)] = [
            (["promotional-v1", "--product", "com.example.monthly", "--offer", "WINBACK50", "--application-username", "Alice",
              "--nonce", "A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF", "--timestamp", "1767225600789"], "promotional_offer_v1", nil),
            (["promotional-v2", "--product", "com.example.monthly", "--offer", "WINBACK50", "--transaction-id", "2000000000000001"], "promotional_offer_v2", "promotional-offer"),
            (["introductory", "--product", "com.example.monthly", "--transaction-id", "2000000000000001", "--allow", "false"], "introductory_offer_eligibility", "introductory-offer-eligibility"),
            (["advanced-commerce", "--request-file", request.path], "advanced_commerce_in_app_request", "advanced-commerce-api"),
        ]
        let body = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? pem
        for test in cases {
            let result = try await CLI.run(["offers", "sign"] + test.arguments + ["--key-file", path] + Self.common)
            #expect(result.status == 0, "\(test.kind): \(result.stderr)")
            #expect(!result.stdout.contains(body) && !result.stderr.contains(body))
            let json = try Self.json(result.stdout)
            #expect(json["kind"] == .string(test.kind))
            if let audience = test.audience {
                let claims = try Self.claims(json["signature"])
                #expect(claims["aud"] == .string(audience))
                #expect(claims["bid"] == .string("com.example.storegate"))
                #expect(claims["iss"] == .string("57246542-96fe-1a63-e053-0824d011072a"))
            } else {
                guard case .object(let signature)? = json["signature"] else {
                    Issue.record("no signature object")
                    continue
                }
                #expect(signature["nonce"] == .string("a1b2c3d4-e5f6-4711-8899-aabbccddeeff"))
                #expect(signature["timestamp"] == .integer(1_767_225_600_789))
                #expect(signature["applicationUsername"] == .string("alice"))
                #expect(signature["keyId"] == .string("OFFERKEY01"))
            }
        }
    }

    @Test("the key comes from the environment when no file is given")
    func fromEnvironment() async throws {
        let (path, _) = try Self.keyFile()
        let result = try await CLI.run(
            ["offers", "sign", "promotional-v2", "--product", "p", "--offer", "o"],
            environment: ["STOREGATE_OFFER_KEY_ID": "ENVKEY", "STOREGATE_OFFER_PRIVATE_KEY_FILE": path,
                          "STOREGATE_APPSTORE_ISSUER_ID": "issuer", "STOREGATE_BUNDLE_ID": "com.example.env"]
        )
        #expect(result.status == 0, "\(result.stderr)")
        let compact = try Self.json(result.stdout)["signature"]
        guard case .string(let jws)? = compact else { throw CLIError("no JWS") }
        let header = try JSONReader.readObject(try #require(Base64.decode(jws.split(separator: ".")[0], mode: .url))).get()
        #expect(header["kid"] == .string("ENVKEY"))
        #expect(try Self.claims(compact)["bid"] == .string("com.example.env"))
    }

    @Test("unusable input exits 2 with one line", arguments: [
        ["promotional-v2", "--product", "p", "--offer", ""],
        ["introductory", "--product", "p", "--transaction-id", "1", "--allow", "maybe"],
        ["promotional-v1", "--product", "p", "--offer", "o", "--nonce", "not-a-uuid"],
        ["advanced-commerce", "--request-file", "/nonexistent/request.json"],
    ])
    func unusable(_ arguments: [String]) async throws {
        let (path, _) = try Self.keyFile()
        let result = try await CLI.run(["offers", "sign"] + arguments + ["--key-file", path] + Self.common)
        #expect(result.status == 2)
        #expect(result.stdout.isEmpty)
        #expect(result.stderr.split(separator: "\n").count == 1, "\(result.stderr)")
    }

    @Test("a missing or unusable key exits 2 naming the problem, never the key")
    func badKey() async throws {
        let garbage = try TemporaryFiles.file(Array("-----BEGIN PRIVATE KEY-----\nSECRETSECRET\n-----END PRIVATE KEY-----\n".utf8), name: "bad.p8", prefix: "cli-offers")
        let bad = try await CLI.run(["offers", "sign", "promotional-v1", "--product", "p", "--offer", "o", "--key-file", garbage.path] + Self.common)
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("invalid_key"))
        #expect(!bad.stderr.contains("SECRETSECRET"))
        let none = try await CLI.run(["offers", "sign", "promotional-v1", "--product", "p", "--offer", "o", "--bundle-id", "b"],
                                     environment: ["STOREGATE_OFFER_KEY_ID": "", "STOREGATE_APPSTORE_KEY_ID": ""])
        #expect(none.status == 2)
        #expect(none.stderr.contains("no offer key"))
    }
}

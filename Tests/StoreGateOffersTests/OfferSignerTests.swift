import Crypto
import Foundation
import StoreGateCore
import StoreGateOffers
import Testing

/// A key, a pinned clock and pinned nonces.
struct Fixture {
    static let privateKey = P256.Signing.PrivateKey()
    static let nonce = UUID(uuidString: "A1B2C3D4-E5F6-4711-8899-AABBCCDDEEFF") ?? UUID()
    static let now = Date(timeIntervalSince1970: 1_767_225_600.789)

    static func key(issuer: String? = "57246542-96fe-1a63-e053-0824d011072a") throws -> OfferSigningKey {
        try OfferSigningKey(keyId: "OFFERKEY01", issuerId: issuer, privateKey: privateKey)
    }

    static func signer(issuer: String? = "57246542-96fe-1a63-e053-0824d011072a") throws -> OfferSigner {
        try OfferSigner(key: key(issuer: issuer), bundleId: "com.example.storegate", now: { now }, nonce: { nonce })
    }

    /// The members of a JSON object, read by Core's strict reader (numbers keep whether they
    /// were integers).
    static func members(_ bytes: [UInt8]) throws -> [String: JSONValue] {
        Dictionary(uniqueKeysWithValues: try JSONReader.readObject(bytes).get().members.map { ($0.key, $0.value) })
    }

    /// The header and claims of a compact JWS as JSON values, after checking its ES256 signature.
    static func openValues(_ jws: String) throws -> (header: [String: JSONValue], claims: [String: JSONValue]) {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        _ = try open(jws)
        return (try members(try #require(Base64.decode(parts[0], mode: .url))), try members(try #require(Base64.decode(parts[1], mode: .url))))
    }

    /// The header and claims of a compact JWS, after checking its ES256 signature.
    static func open(_ jws: String) throws -> (header: [String: Any], claims: [String: Any]) {
        let parts = jws.split(separator: ".", omittingEmptySubsequences: false)
        try #require(parts.count == 3)
        let header = try #require(Base64.decode(parts[0], mode: .url))
        let claims = try #require(Base64.decode(parts[1], mode: .url))
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: try #require(Base64.decode(parts[2], mode: .url)))
        #expect(privateKey.publicKey.isValidSignature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))
        return (
            try #require(try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any]),
            try #require(try JSONSerialization.jsonObject(with: Data(claims)) as? [String: Any])
        )
    }
}

@Suite("offer signatures: StoreKit 1 and the StoreKit 2 JWS")
struct OfferSignerTests {
    @Test("the StoreKit 1 payload is Apple's: seven parts joined by U+2063, username and nonce lower case")
    func sk1Payload() {
        let payload = OfferSigner.promotionalOfferV1Payload(
            bundleId: "com.example.storegate", keyId: "OFFERKEY01", productId: "com.example.monthly", offerIdentifier: "WINBACK50",
            applicationUsername: "7E3FB20B-4CDB-47CC-936D-99D65F608138", nonce: Fixture.nonce, timestamp: 1_767_225_600_789
        )
        #expect(payload == "com.example.storegate\u{2063}OFFERKEY01\u{2063}com.example.monthly\u{2063}WINBACK50\u{2063}7e3fb20b-4cdb-47cc-936d-99d65f608138\u{2063}a1b2c3d4-e5f6-4711-8899-aabbccddeeff\u{2063}1767225600789")
        #expect(Array(OfferSigner.separator.utf8) == [0xE2, 0x81, 0xA3])
    }

    @Test("a StoreKit 1 signature is DER ECDSA P-256 over that payload, base64, with the values the app needs")
    func sk1Signature() throws {
        let signature = try Fixture.signer().promotionalOfferV1(productId: "com.example.monthly", offerIdentifier: "WINBACK50", applicationUsername: "Alice-Token")
        #expect(signature.timestamp == 1_767_225_600_789)
        #expect(signature.nonce == Fixture.nonce)
        #expect(signature.keyId == "OFFERKEY01")
        #expect(signature.applicationUsername == "alice-token")
        let der = try #require(Data(base64Encoded: signature.encodedSignature))
        let ecdsa = try P256.Signing.ECDSASignature(derRepresentation: der)
        let payload = OfferSigner.promotionalOfferV1Payload(
            bundleId: "com.example.storegate", keyId: "OFFERKEY01", productId: "com.example.monthly", offerIdentifier: "WINBACK50",
            applicationUsername: "alice-token", nonce: Fixture.nonce, timestamp: 1_767_225_600_789
        )
        #expect(Fixture.privateKey.publicKey.isValidSignature(ecdsa, for: Array(payload.utf8)))
        // Over any other text it does not verify.
        #expect(!Fixture.privateKey.publicKey.isValidSignature(ecdsa, for: Array((payload + "0").utf8)))
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(signature)) as? [String: Any])
        #expect(json["nonce"] as? String == "a1b2c3d4-e5f6-4711-8899-aabbccddeeff")
        #expect(Set(json.keys) == ["encodedSignature", "productId", "offerIdentifier", "keyId", "nonce", "timestamp", "applicationUsername"])
    }

    @Test("promotional offer V2: Apple's header and exactly Apple's claims", arguments: [nil, "2000000000000001"])
    func promotionalV2(transactionId: String?) throws {
        let jws = try Fixture.signer().promotionalOfferV2(productId: "com.example.monthly", offerIdentifier: "WINBACK50", transactionId: transactionId)
        let (header, claims) = try Fixture.openValues(jws)
        #expect(header == ["alg": .string("ES256"), "kid": .string("OFFERKEY01"), "typ": .string("JWT")])
        var expected: [String: JSONValue] = [
            "productId": .string("com.example.monthly"), "offerIdentifier": .string("WINBACK50"), "bid": .string("com.example.storegate"),
            "iss": .string("57246542-96fe-1a63-e053-0824d011072a"), "aud": .string("promotional-offer"), "iat": .integer(1_767_225_600),
            "nonce": .string("a1b2c3d4-e5f6-4711-8899-aabbccddeeff"),
        ]
        if let transactionId { expected["transactionId"] = .string(transactionId) }
        #expect(claims == expected, "\(claims)")
    }

    @Test("introductory offer eligibility: exactly Apple's claims", arguments: [true, false])
    func introductory(allow: Bool) throws {
        let jws = try Fixture.signer().introductoryOfferEligibility(productId: "com.example.monthly", allowIntroductoryOffer: allow, transactionId: "2000000000000001")
        let (_, claims) = try Fixture.openValues(jws)
        #expect(claims["aud"] == .string("introductory-offer-eligibility"))
        #expect(claims["allowIntroductoryOffer"] == .bool(allow))
        #expect(claims["transactionId"] == .string("2000000000000001"))
        #expect(Set(claims.keys) == ["productId", "allowIntroductoryOffer", "transactionId", "bid", "iss", "aud", "iat", "nonce"])
    }

    @Test("Advanced Commerce: the request claim is the request's JSON bytes in standard base64")
    func advancedCommerce() throws {
        let request = Array(#"{"operation": "CREATE_SUBSCRIPTION", "version": "1", "requestInfo": {"requestReferenceId": "f55df048-4cd8-4261-b404-b6f813ea71a7"}}"#.utf8)
        let jws = try Fixture.signer().advancedCommerceInAppRequest(request)
        let (_, claims) = try Fixture.open(jws)
        #expect(claims["aud"] as? String == "advanced-commerce-api")
        #expect(Set(claims.keys) == ["request", "bid", "iss", "aud", "iat", "nonce"])
        let encoded = try #require(claims["request"] as? String)
        #expect(Data(base64Encoded: encoded).map(Array.init) == request)
        for refused in ["[1]", "{", "", "{\"a\":1} x"] {
            let error = try #require(throws: OfferSigningError.self) { try Fixture.signer().advancedCommerceInAppRequest(Array(refused.utf8)) }
            #expect(error.code == .invalidRequest)
        }
    }

    @Test("each JWS carries a fresh nonce from the source")
    func freshNonces() throws {
        let signer = try OfferSigner(key: Fixture.key(), bundleId: "com.example.storegate")
        let first = try Fixture.open(signer.promotionalOfferV2(productId: "p", offerIdentifier: "o")).claims["nonce"] as? String
        let second = try Fixture.open(signer.promotionalOfferV2(productId: "p", offerIdentifier: "o")).claims["nonce"] as? String
        #expect(first != second)
        #expect(first.flatMap(UUID.init(uuidString:)) != nil)
        #expect(first == first?.lowercased())
    }

    @Test("empty parameters are refused by name; StoreKit 2 needs the issuer id")
    func refusals() throws {
        let signer = try Fixture.signer()
        #expect(try #require(throws: OfferSigningError.self) { try signer.promotionalOfferV1(productId: "", offerIdentifier: "o") }.field == "productId")
        #expect(try #require(throws: OfferSigningError.self) { try signer.promotionalOfferV2(productId: "p", offerIdentifier: "") }.field == "offerIdentifier")
        #expect(try #require(throws: OfferSigningError.self) { try signer.promotionalOfferV2(productId: "p", offerIdentifier: "o", transactionId: "") }.field == "transactionId")
        #expect(try #require(throws: OfferSigningError.self) {
            try signer.introductoryOfferEligibility(productId: "p", allowIntroductoryOffer: true, transactionId: "")
        }.code == .invalidRequest)
        let noIssuer = try Fixture.signer(issuer: nil)
        #expect(try #require(throws: OfferSigningError.self) { try noIssuer.promotionalOfferV2(productId: "p", offerIdentifier: "o") }.code == .invalidKey)
        _ = try noIssuer.promotionalOfferV1(productId: "p", offerIdentifier: "o")  // StoreKit 1 needs none
        #expect(throws: OfferSigningError(.invalidRequest, reason: "")) { try OfferSigner(key: Fixture.key(), bundleId: "") }
    }
}

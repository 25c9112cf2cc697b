import Crypto
import Foundation
import StoreGateCore
import StoreGateOffers
import Testing

@Suite("offer keys and the signing service")
struct OfferKeyAndServiceTests {
    static func write(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("offer-key-\(UUID().uuidString).p8")
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test("a key is read from a .p8 file or the environment, the offer key first, the Server API key as fallback")
    func keySources() throws {
        let pem = Fixture.privateKey.pemRepresentation
        let path = try Self.write(pem)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try OfferSigningKey(keyId: "K1", privateKeyFile: path)
        #expect(fromFile.publicKey.rawRepresentation == Fixture.privateKey.publicKey.rawRepresentation)
        let offer = try #require(try OfferSigningKey.fromEnvironment([
            "STOREGATE_OFFER_KEY_ID": "OFFER", "STOREGATE_OFFER_PRIVATE_KEY_FILE": path,
            "STOREGATE_APPSTORE_KEY_ID": "API", "STOREGATE_APPSTORE_PRIVATE_KEY": "not used", "STOREGATE_APPSTORE_ISSUER_ID": "ISS",
        ]))
        #expect(offer.keyId == "OFFER")
        #expect(offer.issuerId == "ISS")
        let fallback = try #require(try OfferSigningKey.fromEnvironment(["STOREGATE_APPSTORE_KEY_ID": "API", "STOREGATE_APPSTORE_PRIVATE_KEY": pem]))
        #expect(fallback.keyId == "API")
        #expect(fallback.issuerId == nil)
        #expect(try OfferSigningKey.fromEnvironment([:]) == nil)
    }

    @Test("an unusable key is refused, and the key never appears in a description or an error")
    func keyRefusals() throws {
        let pem = Fixture.privateKey.pemRepresentation
        let body = pem.split(separator: "\n").dropFirst().first.map(String.init) ?? pem
        let key = try OfferSigningKey(keyId: "K1", privateKeyPEM: pem)
        #expect(!key.description.contains(body))
        #expect(key.description.contains("<redacted>"))
        let missing = try #require(throws: OfferSigningError.self) { try OfferSigningKey.fromEnvironment(["STOREGATE_OFFER_KEY_ID": "OFFER"]) }
        #expect(missing.code == .missingKey)
        let garbage = try #require(throws: OfferSigningError.self) { try OfferSigningKey(keyId: "K1", privateKeyPEM: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----") }
        #expect(garbage.code == .invalidKey)
        #expect(!garbage.description.contains("AAAA"))
        let rsa = try #require(throws: OfferSigningError.self) { try OfferSigningKey(keyId: "K1", privateKeyFile: "/nonexistent/key.p8") }
        #expect(rsa.code == .invalidKey)
        #expect(try #require(throws: OfferSigningError.self) { try OfferSigningKey(keyId: "", privateKeyPEM: pem) }.field == "keyId")
    }

    actor Calls {
        var seen: [(OfferSignatureRequest, String?)] = []
        func add(_ request: OfferSignatureRequest, _ account: String?) { seen.append((request, account)) }
    }

    @Test("the service asks the rule first: eligible signs, ineligible refuses with the rule's reason")
    func eligibility() async throws {
        let calls = Calls()
        let rule = ClosureOfferEligibilityRule { request, account in
            await calls.add(request, account)
            return account == "held-the-group" ? .eligible : .ineligible(reason: "the account never held the subscription group")
        }
        let service = OfferSigningService(signer: try Fixture.signer(), eligibility: rule)
        let request = OfferSignatureRequest.promotionalOfferV2(productId: "com.example.monthly", offerIdentifier: "WINBACK50", transactionId: nil)
        let signed = try await service.sign(request, account: "held-the-group")
        #expect(signed.kind == .promotionalOfferV2)
        let refused = await #expect(throws: OfferSigningError.self) { try await service.sign(request, account: "newcomer") }
        #expect(refused?.code == .ineligible)
        #expect(refused?.reason == "the account never held the subscription group")
        #expect(await calls.seen.map(\.1) == ["held-the-group", "newcomer"])
        #expect(await calls.seen.first?.0 == request)
    }

    struct Unavailable: Error {}

    @Test("a rule that fails is not a yes: nothing is signed and the refusal is retryable")
    func ruleFails() async throws {
        let service = OfferSigningService(signer: try Fixture.signer(), eligibility: ClosureOfferEligibilityRule { _, _ in throw Unavailable() })
        let error = await #expect(throws: OfferSigningError.self) {
            try await service.sign(.promotionalOfferV1(productId: "p", offerIdentifier: "o", applicationUsername: ""), account: nil)
        }
        #expect(error?.code == .eligibilityUnavailable)
        #expect(error?.isRetryable == true)
    }

    @Test("without a rule every kind is signed, and written as {kind, signature}", arguments: OfferSignatureKind.allCases)
    func everyKind(_ kind: OfferSignatureKind) async throws {
        let service = OfferSigningService(signer: try Fixture.signer())
        let request: OfferSignatureRequest
        switch kind {
        case .promotionalOfferV1: request = .promotionalOfferV1(productId: "p", offerIdentifier: "o", applicationUsername: "u")
        case .promotionalOfferV2: request = .promotionalOfferV2(productId: "p", offerIdentifier: "o", transactionId: "1")
        case .introductoryOfferEligibility: request = .introductoryOfferEligibility(productId: "p", allowIntroductoryOffer: false, transactionId: "1")
        case .advancedCommerceInAppRequest: request = .advancedCommerceInAppRequest(request: Array(#"{"a":1}"#.utf8))
        }
        #expect(request.kind == kind)
        let signature = try await service.sign(request, account: nil)
        #expect(signature.kind == kind)
        let json = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(signature)) as? [String: Any])
        #expect(json["kind"] as? String == kind.rawValue)
        if kind == .promotionalOfferV1 {
            #expect(json["signature"] is [String: Any])
        } else {
            #expect((json["signature"] as? String)?.split(separator: ".").count == 3)
        }
    }
}

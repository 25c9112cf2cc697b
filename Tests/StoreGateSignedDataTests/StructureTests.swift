import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

@Suite("Compact JWS structure and header")
struct StructureTests {
    let minter: JWSMinter
    let verifier: SignedDataVerifier
    let payload: [String: Any]

    init() throws {
        minter = try SignedDataTesting.minter()
        verifier = try SignedDataTesting.verifier()
        payload = JWSPayloads.transaction()
    }

    func failure(_ jws: String) async -> SignedDataError? {
        await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(jws) }
    }

    @Test("a well-formed minted transaction verifies as Test")
    func mintedTransactionVerifies() async throws {
        let jws = try minter.mint(json: payload)
        let verified = try await verifier.verifyTransaction(jws)
        #expect(verified.environment == .test)
        #expect(verified.details.claimedEnvironment == .sandbox)
        #expect(verified.details.anchor == .optIn)
        #expect(verified.transaction.transactionId == "2000000100000001")
    }

    @Test("alg none is refused even with an empty signature")
    func algNone() async throws {
        var header = minter.defaultHeader
        header.algorithm = "none"
        let error = await failure(try minter.mint(json: payload, header: header, signature: .empty))
        #expect(error?.code == .unsupportedAlgorithm)
        #expect(error?.step == .structure)
        #expect(error?.field == "header.alg")
    }

    @Test("alg HS256 keyed with the leaf's public key is refused (algorithm confusion)")
    func algorithmConfusion() async throws {
        var header = minter.defaultHeader
        header.algorithm = "HS256"
        let jws = try minter.mint(json: payload, header: header, signature: .hmacSHA256(secret: minter.leafPublicKeyPEM))
        let error = await failure(jws)
        #expect(error?.code == .unsupportedAlgorithm)
    }

    @Test("any algorithm but ES256 is refused", arguments: ["RS256", "ES384", "PS256", "es256", "ES256 ", "", "EdDSA"])
    func otherAlgorithms(_ algorithm: String) async throws {
        var header = minter.defaultHeader
        header.algorithm = algorithm
        let error = await failure(try minter.mint(json: payload, header: header))
        #expect(error?.code == .unsupportedAlgorithm)
    }

    @Test("a header without alg is refused")
    func missingAlgorithm() async throws {
        var header = minter.defaultHeader
        header.algorithm = nil
        let error = await failure(try minter.mint(json: payload, header: header))
        #expect(error?.code == .unsupportedAlgorithm)
    }

    @Test("a second alg member is refused, whichever comes first")
    func duplicateAlgorithm() async throws {
        var header = minter.defaultHeader
        header.extraMembers = [("alg", "\"none\"")]
        let error = await failure(try minter.mint(json: payload, header: header))
        #expect(error?.code == .malformedHeader)
    }

    @Test("parameters that would change key selection or processing are refused", arguments: ["crit", "jku", "jwk", "x5u"])
    func refusedParameters(_ name: String) async throws {
        var header = minter.defaultHeader
        header.extraMembers = [(name, name == "crit" ? "[\"b64\"]" : "\"https://attacker.example\"")]
        let error = await failure(try minter.mint(json: payload, header: header))
        #expect(error?.code == .unsupportedHeaderParameter)
    }

    @Test("a header without x5c is refused")
    func missingX5C() async throws {
        let header = JWSMinter.Header(certificateChain: nil)
        let error = await failure(try minter.mint(json: payload, header: header))
        #expect(error?.code == .missingCertificates)
    }

    @Test("x5c with 2 or 4 certificates is refused in the structure step", arguments: [2, 4])
    func wrongCertificateCount(_ count: Int) async throws {
        let chain = minter.chain
        let certificates = count == 2 ? Array(chain.prefix(2)) : chain + [chain[2]]
        let error = await failure(try minter.mint(json: payload, header: JWSMinter.Header(certificateChain: certificates)))
        #expect(error?.code == .wrongCertificateCount)
        #expect(error?.step == .structure)
    }

    @Test("x5c with only the leaf is refused unless the leaf itself is an opt-in anchor")
    func loneLeaf() async throws {
        let error = await failure(try minter.mint(json: payload, header: JWSMinter.Header(certificateChain: [minter.chain[0]])))
        #expect(error?.code == .chain(.untrustedRoot))
    }

    @Test("a self-signed certificate carrying both Apple markers is refused when not an anchor")
    func selfSignedWithMarkers() async throws {
        let forged = try TestCertificateAuthority.selfSigned(keyKind: .p256)
        let jws = try minter.mint(
            json: payload, header: JWSMinter.Header(certificateChain: [Base64.encode(forged.der)]), key: forged.p256Key)
        let error = await failure(jws)
        #expect(error?.code == .chain(.untrustedRoot))
    }

    @Test("an x5c entry that is not base64 DER is refused in the chain step")
    func garbageCertificate() async throws {
        var chain = minter.chain
        chain[1] = "not*base64"
        let error = await failure(try minter.mint(json: payload, header: JWSMinter.Header(certificateChain: chain)))
        #expect(error?.code == .chain(.malformedCertificate))
        chain[1] = Base64.encode(Array("definitely not a certificate".utf8))
        let second = await failure(try minter.mint(json: payload, header: JWSMinter.Header(certificateChain: chain)))
        #expect(second?.code == .chain(.malformedCertificate))
    }

    @Test("inputs that are not three parts are refused", arguments: ["abc", "a.b", "a.b.c.d", "..", "a..c", ".b.c", "a.b."])
    func notThreeParts(_ input: String) async throws {
        let error = await failure(input)
        #expect(error?.step == .structure)
        #expect(error?.code == .malformedCompactSerialization || error?.code == .invalidBase64URL || error?.code == .malformedHeader)
    }

    @Test("each part must be strict unpadded base64url", arguments: [0, 1, 2])
    func nonBase64URLParts(_ part: Int) async throws {
        let jws = try minter.mint(json: payload)
        for corruption in ["=", "+", "/", " ", "!"] {
            var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            parts[part] += corruption
            let error = await failure(parts.joined(separator: "."))
            #expect(error?.code == .invalidBase64URL)
            #expect(error?.field == ["header", "payload", "signature"][part])
        }
    }

    @Test("base64url with non-zero trailing bits is refused")
    func nonCanonicalBase64URL() async throws {
        let jws = try minter.mint(json: payload)
        var parts = jws.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        // 64 signature bytes end in 2 characters carrying 4 padding bits; set one of them.
        let last = parts[2].removeLast()
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let index = try #require(alphabet.firstIndex(of: last))
        #expect(index & 0x0F == 0)
        parts[2].append(alphabet[index | 1])
        let error = await failure(parts.joined(separator: "."))
        #expect(error?.code == .invalidBase64URL)
    }

    @Test("a header that is not JSON is refused")
    func headerNotJSON() async throws {
        let jws = Base64.encode(Array("alg=ES256".utf8), url: true) + ".e30.AAAA"
        let error = await failure(jws)
        #expect(error?.code == .malformedHeader)
    }

    @Test("a payload that is not JSON is refused in the payload step, after its signature verified")
    func payloadNotJSON() async throws {
        for bytes in [Array("not json".utf8), Array("[1,2]".utf8), Array("{\"a\":1}x".utf8), [0xFF, 0xFE]] {
            let error = await failure(try minter.mint(payload: bytes))
            #expect(error?.code == .malformedJSON)
            #expect(error?.step == .payload)
        }
    }

    @Test("a member of the wrong JSON type is refused with its name")
    func wrongMemberType() async throws {
        var changed = payload
        changed["quantity"] = "one"
        let error = await failure(try minter.mint(json: changed))
        #expect(error?.code == .invalidField)
        #expect(error?.field == "quantity")
    }

    @Test("a transaction without signedDate is refused")
    func missingSignedDate() async throws {
        var changed = payload
        changed["signedDate"] = nil
        let error = await failure(try minter.mint(json: changed))
        #expect(error?.code == .missingField)
        #expect(error?.field == "signedDate")
    }

    @Test("input over the size limit is refused before any work, empty input too")
    func oversizedAndEmpty() async throws {
        let small = try SignedDataTesting.verifier(limits: Limits(maxJWSBytes: 1024))
        let jws = try minter.mint(json: payload)
        let error = await #expect(throws: SignedDataError.self) { _ = try await small.verifyTransaction(jws) }
        #expect(error?.code == .tooLarge)
        #expect(error?.step == .input)
        let empty = await failure("")
        #expect(empty?.code == .empty)
    }
}

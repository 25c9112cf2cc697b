import Crypto
import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing
import X509

@Suite("Signature and certificate chain")
struct ChainAndSignatureTests {
    let minter: JWSMinter
    let verifier: SignedDataVerifier
    let payload: [String: Any]

    init() throws {
        minter = try SignedDataTesting.minter()
        verifier = try SignedDataTesting.verifier()
        payload = JWSPayloads.transaction()
    }

    func failure(_ jws: String, with verifier: SignedDataVerifier? = nil) async -> SignedDataError? {
        let verifier = verifier ?? self.verifier
        return await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(jws) }
    }

    @Test("a payload changed after signing fails the signature")
    func payloadChangedAfterSigning() async throws {
        let jws = try minter.mint(json: payload)
        var changed = payload
        changed["productId"] = "com.example.storegate.lifetime"
        let error = await failure(JWSMinter.replacingPayload(of: jws, with: try JWSMinter.json(changed)))
        #expect(error?.code == .signatureInvalid)
        #expect(error?.step == .signature)
    }

    @Test("a signature by another key fails, even with a trusted chain in x5c")
    func signatureByAnotherKey() async throws {
        let error = await failure(try minter.mint(json: payload, key: P256.Signing.PrivateKey()))
        #expect(error?.code == .signatureInvalid)
    }

    @Test("a signature by another key fails also when the chain is cached")
    func signatureByAnotherKeyWarm() async throws {
        _ = try await verifier.verifyTransaction(try minter.mint(json: payload))
        let error = await failure(try minter.mint(json: payload, key: P256.Signing.PrivateKey()))
        #expect(error?.code == .signatureInvalid)
    }

    @Test("a DER-encoded signature is refused: ES256 is raw r‖s")
    func derSignature() async throws {
        let error = await failure(try minter.mint(json: payload, signature: .der))
        #expect(error?.code == .malformedSignature)
        #expect(error?.step == .signature)
    }

    @Test("signatures of the wrong length are refused", arguments: [0, 32, 63, 65, 128])
    func wrongSignatureLength(_ length: Int) async throws {
        let signature: JWSMinter.Signature = length == 0 ? .empty : .bytes([UInt8](repeating: 7, count: length))
        let error = await failure(try minter.mint(json: payload, signature: signature))
        #expect(error?.code == (length == 0 ? .malformedCompactSerialization : .malformedSignature))
    }

    @Test("a zero signature is refused")
    func zeroSignature() async throws {
        let error = await failure(try minter.mint(json: payload, signature: .bytes([UInt8](repeating: 0, count: 64))))
        #expect(error?.code == .signatureInvalid || error?.code == .malformedSignature)
    }

    @Test("a chain whose root is not pinned and not an opt-in anchor is refused")
    func rootNotPinned() async throws {
        let stranger = try TestCertificateAuthority(keyKind: .p256, shape: .init(label: "Stranger"))
        let jws = try JWSMinter(authority: stranger).mint(json: payload)
        let error = await failure(jws)
        #expect(error?.code == .chain(.untrustedRoot))
        #expect(error?.step == .chain)
        let appleOnly = SignedDataVerifier(expectations: .init(bundleId: SignedDataTesting.bundleId, environments: [.test, .sandbox]))
        let second = await failure(jws, with: appleOnly)
        #expect(second?.code == .chain(.untrustedRoot))
    }

    @Test("a root re-issued for the opt-in anchor (same name and key, another certificate) verifies and reports the anchor")
    func reissuedAnchorRoot() async throws {
        let authority = minter.authority
        let reissued = try authority.reissuedRoot()
        #expect(reissued.der != authority.root.der)
        let jws = try JWSMinter(authority: authority.replacingRoot(with: reissued)).mint(json: payload)
        let verified = try await verifier.verifyTransaction(jws)
        #expect(verified.details.anchor == .optIn)
        #expect(verified.details.chain.last?.sha256 == authority.root.fingerprint.description)
    }

    @Test("a root that copies the anchor's name with another key is refused as a forged root, listed or not")
    func forgedRootCopyingTheName() async throws {
        // Same label: the same subject names as the trusted authority, other keys throughout.
        var shape = TestCertificateAuthority.Shape(label: minter.authority.shape.label)
        shape.leafHasMarker = false
        shape.intermediateHasMarker = false
        let forger = try TestCertificateAuthority(keyKind: .p256, shape: shape)
        #expect(forger.root.certificate.subject == minter.authority.root.certificate.subject)
        let listedForgedRoot = await failure(try JWSMinter(authority: forger).mint(json: payload))
        #expect(listedForgedRoot?.code == .chain(.untrustedRoot))
        #expect(listedForgedRoot?.field == "header.x5c[2]")
        #expect(listedForgedRoot?.reason.contains("forged root") == true)
        // The genuine root listed last, the forger's intermediate (signed by the forged root) before it.
        let genuineRootListed = await failure(try JWSMinter(authority: forger.replacingRoot(with: minter.authority.root)).mint(json: payload))
        #expect(genuineRootListed?.code == .chain(.untrustedRoot))
        #expect(genuineRootListed?.reason.contains("forged root") == true)
    }

    @Test("a test chain that ends in Apple's real root certificate is refused",
          .enabled(if: SignedDataTesting.fixturesPresent, Comment(rawValue: Fixtures.missingMessage)))
    func testChainWithAppleRoot() async throws {
        let appleRoot = Base64.encode(try SignedDataTesting.certificate("AppleRootCA-G3.cer"))
        let chain = [minter.chain[0], minter.chain[1], appleRoot]
        let appleOnly = SignedDataVerifier(expectations: .init(bundleId: SignedDataTesting.bundleId, environments: [.test, .sandbox]))
        let error = await failure(try minter.mint(json: payload, header: .init(certificateChain: chain)), with: appleOnly)
        #expect(error?.step == .chain)
    }

    @Test("a leaf without Apple's receipt-signing marker is refused")
    func leafWithoutMarker() async throws {
        var shape = TestCertificateAuthority.Shape(label: "No Leaf Marker")
        shape.leafHasMarker = false
        let authority = try TestCertificateAuthority(keyKind: .p256, shape: shape)
        let error = await failure(try JWSMinter(authority: authority).mint(json: payload), with: try SignedDataTesting.verifier(trusting: authority))
        #expect(error?.code == .chain(.leafMarkerMissing))
    }

    @Test("an intermediate without Apple's WWDR marker is refused")
    func intermediateWithoutMarker() async throws {
        var shape = TestCertificateAuthority.Shape(label: "No Intermediate Marker")
        shape.intermediateHasMarker = false
        let authority = try TestCertificateAuthority(keyKind: .p256, shape: shape)
        let error = await failure(try JWSMinter(authority: authority).mint(json: payload), with: try SignedDataTesting.verifier(trusting: authority))
        #expect(error?.code == .chain(.intermediateMarkerMissing))
    }

    @Test("certificates in the wrong order are refused, whoever signed")
    func wrongOrder() async throws {
        let chain = minter.chain
        let authority = minter.authority
        // Listed intermediate first and signed by the intermediate's key: the signature
        // verifies with x5c[0], the order does not.
        let swapped = try minter.mint(
            json: payload, header: .init(certificateChain: [chain[1], chain[0], chain[2]]), key: authority.intermediate.p256Key)
        let swappedError = await failure(swapped)
        #expect(swappedError?.code == .chain(.wrongOrder))
        let rootInMiddle = try minter.mint(json: payload, header: .init(certificateChain: [chain[0], chain[2], chain[1]]))
        let rootInMiddleError = await failure(rootInMiddle)
        #expect(rootInMiddleError?.code == .chain(.wrongOrder))
        let reversed = try minter.mint(
            json: payload, header: .init(certificateChain: [chain[2], chain[1], chain[0]]), key: authority.root.p256Key)
        let reversedError = await failure(reversed)
        #expect(reversedError?.step == .chain)
    }

    @Test("a leaf not valid at signedDate is refused; the same JWS verifies at a time it was valid")
    func leafNotValidAtSigningTime() async throws {
        var shape = TestCertificateAuthority.Shape(label: "Short-lived Leaf")
        shape.leafValidity = Date(timeIntervalSince1970: 1_600_000_000)...Date(timeIntervalSince1970: 1_650_000_000)
        let authority = try TestCertificateAuthority(keyKind: .p256, shape: shape)
        let jws = try JWSMinter(authority: authority).mint(json: payload)  // signedDate 2023-11-14
        let error = await failure(jws, with: try SignedDataTesting.verifier(trusting: authority))
        #expect(error?.code == .chain(.notValidAtSigningTime))
        let atValidTime = try SignedDataTesting.verifier(trusting: authority, validationTime: .fixed(Date(timeIntervalSince1970: 1_620_000_000)))
        #expect(try await atValidTime.verifyTransaction(jws).details.validationTime == Date(timeIntervalSince1970: 1_620_000_000))
    }

    @Test("a real Apple chain in x5c does not vouch for a payload signed by someone else",
          .enabled(if: SignedDataTesting.fixturesPresent, Comment(rawValue: Fixtures.missingMessage)))
    func realChainForgedSignature() async throws {
        let real = try #require(SignedDataTesting.fixture("gopay-sandbox-2022-11-signed-transaction-info-a.jws"))
        let header = try CompactJWS(real).header
        let forged = try minter.mint(
            json: JWSPayloads.transaction(bundleId: "Com.VoiceRecording.Telephone", signedDate: Date(timeIntervalSince1970: 1_667_559_685)),
            header: .init(certificateChain: header.certificateChain))
        let apple = SignedDataVerifier(expectations: .init(bundleId: "Com.VoiceRecording.Telephone"))
        for _ in 0..<2 {  // cold, then with the chain cached by the genuine JWS
            let error = await failure(forged, with: apple)
            #expect(error?.code == .signatureInvalid)
            _ = try await apple.verifyTransaction(real)
        }
    }

    @Test("a real Apple JWS whose payload was edited fails the signature",
          .enabled(if: SignedDataTesting.fixturesPresent, Comment(rawValue: Fixtures.missingMessage)))
    func realPayloadEdited() async throws {
        let real = try #require(SignedDataTesting.fixture("gopay-sandbox-2022-11-signed-transaction-info-a.jws"))
        let jws = try CompactJWS(real)
        let edited = String(decoding: jws.payload, as: UTF8.self).replacingOccurrences(of: "Telephone.103", with: "Telephone.999")
        let error = await failure(
            JWSMinter.replacingPayload(of: real, with: Array(edited.utf8)),
            with: SignedDataVerifier(expectations: .init(bundleId: "Com.VoiceRecording.Telephone")))
        #expect(error?.code == .signatureInvalid)
    }

    @Test("the warm path reuses the chain and reports the cache hit")
    func warmPath() async throws {
        let first = try await verifier.verifyTransaction(try minter.mint(json: payload))
        let second = try await verifier.verifyTransaction(try minter.mint(json: JWSPayloads.transaction(transactionId: "2000000100000002")))
        #expect(!first.details.chainCacheHit)
        #expect(second.details.chainCacheHit)
        #expect(verifier.chainVerifier.cachedChainCount == 1)
    }

    @Test("a JWS whose x5c differs from a cached chain by one byte in the middle is validated afresh, not answered from the cache")
    func cacheKeyIsTheExactChain() async throws {
        _ = try await verifier.verifyTransaction(try minter.mint(json: payload))
        let statistics = verifier.chainVerifier.statistics
        var leaf = minter.authority.leaf.der
        leaf[leaf.count / 2] ^= 0x01
        var header = minter.defaultHeader
        header.certificateChain = [Base64.encode(leaf)] + minter.chain.dropFirst()
        let error = await failure(try minter.mint(json: payload, header: header))
        #expect(error != nil)
        #expect(verifier.chainVerifier.statistics.cacheHits == statistics.cacheHits)
    }

    @Test("chain-cache keys are equal exactly when the policy and every byte of every part are")
    func chainCacheKeyEquality() throws {
        let parts: [[UInt8]] = [Array(repeating: 0x41, count: 100), Array(0..<200).map { UInt8(0x30 + $0 % 64) }]
        let key = ChainCacheKey(policy: .signedData, material: parts.map { $0[...] })
        // The same bytes given as strings' UTF-8 (how x5c arrives) make the same key.
        let strings = parts.map { String(decoding: $0, as: UTF8.self) }
        let fromStrings = ChainCacheKey(policy: .signedData, material: strings.map(\.utf8))
        #expect(key == fromStrings)
        #expect(key.hashValue == fromStrings.hashValue)
        // One byte changed where the lookup's sample does not look: the same hash, still another key.
        let unsampled = (0..<parts[1].count).lazy.map { index -> ChainCacheKey in
            var changed = parts
            changed[1][index] ^= 0x01
            return ChainCacheKey(policy: .signedData, material: changed.map { $0[...] })
        }.first { $0.hashValue == key.hashValue }
        let sameHash = try #require(unsampled)
        #expect(sameHash != key)
        // The same bytes split at another place, or under the other policy.
        let shifted = [parts[0] + parts[1].prefix(1), Array(parts[1].dropFirst())]
        #expect(ChainCacheKey(policy: .signedData, material: shifted.map { $0[...] }) != key)
        #expect(ChainCacheKey(policy: .appReceipt, material: parts.map { $0[...] }) != key)
        #expect(ChainCacheKey(policy: .signedData, material: Array(parts.prefix(1)).map { $0[...] }) != key)
    }
}

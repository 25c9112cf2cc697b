import Crypto
import Foundation
import StoreGateCore
@testable import StoreGateSignedData
import StoreGateTestSupport
import Testing

/// The verifier's memo of JWS headers: a warm verification takes the header from it, only
/// headers whose signature and chain held are kept, and it decides nothing.
@Suite("Header memo")
struct HeaderMemoTests {
    let minter: JWSMinter
    let verifier: SignedDataVerifier

    init() throws {
        minter = try SignedDataTesting.minter()
        verifier = try SignedDataTesting.verifier()
    }

    func split(_ jws: String) throws -> CompactJWS {
        try CompactJWS(bytes: Array(jws.utf8), limits: .default, headers: verifier.headerMemo)
    }

    @Test("a header is kept once its signature and chain held, and the next JWS under it takes it from the memo")
    func keptAfterSuccess() async throws {
        let first = try minter.mint(json: JWSPayloads.transaction())
        #expect(try split(first).headerWasKnown == false)
        let verified = try await verifier.verifyTransaction(first)
        #expect(verifier.headerMemo.count == 1)

        let second = try minter.mint(json: JWSPayloads.transaction(transactionId: "2000000100000002"))
        let known = try split(second)
        #expect(known.headerWasKnown)
        #expect(known.header == (try CompactJWS(second)).header)
        let again = try await verifier.verifyTransaction(second)
        #expect(again.details.header == verified.details.header)
        #expect(again.details.chainCacheHit)
        #expect(verifier.headerMemo.count == 1)
        // A copy of the verifier (other expectations per call) shares the memo.
        #expect(verifier.expecting(nil).headerMemo === verifier.headerMemo)
    }

    @Test("a header whose signature or chain failed is not kept")
    func notKeptAfterFailure() async throws {
        let forged = try minter.mint(json: JWSPayloads.transaction(), key: P256.Signing.PrivateKey())
        await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(forged) }
        let stranger = try JWSMinter(authority: TestCertificateAuthority(keyKind: .p256, shape: .init(label: "Stranger")))
        await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(try stranger.mint(json: JWSPayloads.transaction())) }
        #expect(verifier.headerMemo.count == 0)
    }

    @Test("a known header decides nothing: a forged signature under it still fails")
    func knownHeaderStillChecked() async throws {
        _ = try await verifier.verifyTransaction(try minter.mint(json: JWSPayloads.transaction()))
        let forged = try minter.mint(json: JWSPayloads.transaction(), key: P256.Signing.PrivateKey())
        #expect(try split(forged).headerWasKnown)
        let error = await #expect(throws: SignedDataError.self) { _ = try await verifier.verifyTransaction(forged) }
        #expect(error?.code == .signatureInvalid)
    }

    @Test("a header one byte away from a kept one is read afresh")
    func oneByteAway() async throws {
        _ = try await verifier.verifyTransaction(try minter.mint(json: JWSPayloads.transaction()))
        var header = minter.defaultHeader
        header.keyId = "other"
        let other = try minter.mint(json: JWSPayloads.transaction(), header: header)
        #expect(try split(other).headerWasKnown == false)
        // The kept header's bytes with one character changed in the middle of x5c.
        var bytes = Array(try minter.mint(json: JWSPayloads.transaction()).utf8)
        let middle = bytes.firstIndex(of: UInt8(ascii: "."))! / 2
        bytes[middle] = bytes[middle] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let changed = try? CompactJWS(bytes: bytes, limits: .default, headers: verifier.headerMemo)
        #expect(changed?.headerWasKnown != true)
    }

    @Test("the memo keeps at most its capacity, the oldest out first")
    func capacity() throws {
        let memo = JWSHeaderMemo(capacity: 2)
        let headers = try (0..<3).map { index in
            var header = minter.defaultHeader
            header.keyId = "key-\(index)"
            return try CompactJWS(minter.mint(json: JWSPayloads.transaction(), header: header))
        }
        for jws in headers {
            memo.keep(jws.header, for: jws.headerSegment)
        }
        #expect(memo.count == 2)
        #expect(memo.header(for: headers[0].headerSegment) == nil)
        #expect(memo.header(for: headers[1].headerSegment) == headers[1].header)
        #expect(memo.header(for: headers[2].headerSegment) == headers[2].header)
    }
}

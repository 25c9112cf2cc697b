import StoreGateCore
import StoreGateReceipt
import StoreGateSignedData
import Testing

/// Receipts and JWS speak one error vocabulary: the same concept has the same code on the
/// wire, and every code belongs to one step.
@Suite("One error vocabulary")
struct ErrorVocabularyTests {
    static let chainCodes: [ChainError.Code] = [
        .noCertificates, .malformedCertificate, .untrustedRoot, .notPinned, .leafMarkerMissing, .intermediateMarkerMissing,
        .notValidAtSigningTime, .wrongOrder, .wrongLength, .unsupportedKey, .invalidChain,
    ]

    @Test("a chain failure is spelled chain_<reason> by both proof kinds, in the chain step", arguments: chainCodes)
    func chainCodesAgree(_ code: ChainError.Code) {
        let receipt = ReceiptError.Code.chain(code)
        let jws = SignedDataError.Code.chain(code)
        #expect(receipt.description == "chain_\(code)")
        #expect(jws.description == receipt.description)
        #expect(receipt.step == .chain && jws.step == .chain)
    }

    @Test("shared concepts share their code and step")
    func sharedConcepts() {
        let pairs: [(ReceiptError.Code, SignedDataError.Code)] = [
            (.empty, .empty), (.tooLarge, .tooLarge), (.signatureInvalid, .signatureInvalid), (.unsupportedKey, .unsupportedKey),
            (.missingField, .missingField), (.bundleIdMismatch, .bundleIdMismatch), (.environmentNotAccepted, .environmentNotAccepted),
            (.expectationNotMet, .expectationNotMet),
        ]
        for (receipt, jws) in pairs {
            #expect(receipt.description == jws.description)
            #expect(receipt.step == jws.step, "\(receipt): \(receipt.step) vs \(jws.step)")
        }
    }

    @Test("an error's step is its code's, whoever throws it")
    func stepFollowsTheCode() {
        #expect(SignedDataError(.malformedHeader, reason: "").step == .structure)
        #expect(SignedDataError(.invalidField, reason: "").step == .payload)
        #expect(SignedDataError(.productMismatch, reason: "").step == .expectations)
        #expect(ReceiptError(.malformedPKCS7, reason: "").step == .structure)
    }

    @Test("each vocabulary lists every code once, chain failures once per chain code")
    func completeLists() {
        #expect(Set(ReceiptError.Code.all.map(\.description)).count == ReceiptError.Code.all.count)
        #expect(Set(SignedDataError.Code.all.map(\.description)).count == SignedDataError.Code.all.count)
        #expect(ChainError.Code.all == Self.chainCodes)
        for code in ChainError.Code.all {
            #expect(ReceiptError.Code.all.contains(.chain(code)))
            #expect(SignedDataError.Code.all.contains(.chain(code)))
        }
        #expect(ReceiptError.Code.all.contains(.expectationNotMet) && SignedDataError.Code.all.contains(.renewalInfoMismatch))
    }
}

import Foundation
import FuzzSupport
import StoreGateCore
@_spi(Fuzzing) import StoreGateReceipt

/// The whole offline receipt verification (structure, signer, RSA signature, payload, chain,
/// expectations), with the committed test CA's root as an opt-in anchor so that minted
/// receipts verify and mutations of them get as deep as they can.
///
/// Differential invariant: an input that verifies must carry signed content byte-identical to
/// one of the genuine proofs': the minted originals (`minted-*` in this target's committed corpus) and the
/// real Apple receipts in ../shared/fixtures when present. Anything else verifying would be a
/// forgery accepted. Expectations are taken from the input's own (unverified) claims, so that
/// verification runs to its last step rather than stopping at a bundle-id mismatch.
@main
enum App {
    static func main() {
        let verifier = ReceiptVerifier(
            chainVerifier: CertificateChainVerifier(trustStore: FuzzFiles.testTrustStore()),
            now: { Date(timeIntervalSince1970: 1_700_000_000) }
        )
        let minted = FuzzFiles.corpus("fuzz-receipt-verify").filter { $0.name.hasPrefix("minted-") }
        let real = FuzzFiles.fixtures("receipts", extensions: [".der"])
        var genuine = Set<[UInt8]>()
        for original in minted + real {
            do throws(ReceiptError) {
                genuine.insert(try ReceiptFuzzing.container(der: original.bytes).content)
            } catch {
                FuzzTarget.fail("original \(original.name) has no readable content: \(error)")
            }
        }
        // Set-up check (and cache warm-up): every minted original verifies.
        for original in minted {
            if case .failure(let error) = verify(verifier, original.bytes) {
                FuzzTarget.fail("minted original \(original.name) does not verify (\(error)): regenerate with Scripts/fuzz.sh seeds")
            }
        }
        let genuineContents = genuine
        FuzzTarget.run { bytes in
            guard case .success(let verified) = verify(verifier, bytes) else { return }
            let content: [UInt8]
            do throws(ReceiptError) {
                content = try ReceiptFuzzing.container(der: bytes).content
            } catch {
                FuzzTarget.fail("a verified receipt's container does not read again: \(error)")
            }
            FuzzTarget.require(
                genuineContents.contains(content),
                "a receipt verified whose signed content is not a genuine proof's (bundle \(verified.receipt.bundleId))")
            do throws(ReceiptError) {
                FuzzTarget.require(try AppReceipt(payload: content) == verified.receipt, "the verified receipt is not its signed content's")
            } catch {
                FuzzTarget.fail("a verified receipt's content does not decode again: \(error)")
            }
        }
    }

    static func verify(_ verifier: ReceiptVerifier, _ bytes: [UInt8]) -> Result<VerifiedReceipt, ReceiptError> {
        var expectations = ReceiptExpectations(
            bundleId: "com.example.app",
            environments: [.production, .sandbox, .xcode, .localTesting, .test],
            rejectsExpiredReceipt: false
        )
        do throws(ReceiptError) {
            expectations.bundleId = try UnverifiedReceipt(der: bytes).receipt.bundleId
        } catch {
            // Unreadable: verification will say why.
        }
        let frozen = expectations
        return runBlocking { () async -> Result<VerifiedReceipt, ReceiptError> in
            do throws(ReceiptError) {
                return .success(try await verifier.verify(bytes, expecting: frozen))
            } catch {
                return .failure(error)
            }
        }
    }
}

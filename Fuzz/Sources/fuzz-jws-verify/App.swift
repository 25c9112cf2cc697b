import Foundation
import FuzzSupport
import StoreGateCore
import StoreGateSignedData

/// The whole StoreKit 2 verification (structure, ES256 signature, payload, chain, expectations)
/// of the four kinds of signed data, notifications with their nested JWS, with the committed
/// test CA's root as an opt-in anchor so minted JWS verify and mutations get deep.
///
/// Differential invariant: a JWS that verifies must have a signing input (`header.payload`)
/// byte-identical to a genuine one's: the minted originals (`minted-*` in this target's committed corpus)
/// and the real Apple JWS in ../shared/fixtures when present. The kind and the expectations
/// (bundle id, appAppleId) come from the input's own unverified claims, so verification runs
/// to its end.
@main
enum App {
    static func main() {
        let chainVerifier = CertificateChainVerifier(trustStore: FuzzFiles.testTrustStore())
        let minted = FuzzFiles.corpus("fuzz-jws-verify").filter { $0.name.hasPrefix("minted-") }
        let real = FuzzFiles.fixtures("jws", extensions: [".jws"])
        var genuine = Set<[UInt8]>()
        for original in minted + real {
            do throws(SignedDataError) {
                genuine.insert(Array(try CompactJWS(bytes: trimmed(original.bytes)).signingInput))
            } catch {
                // A fixture that does not split (the missing-x5c mock) can never verify.
            }
        }
        for original in minted {
            if case .failure(let error) = verify(chainVerifier, original.bytes) {
                FuzzTarget.fail("minted original \(original.name) does not verify (\(error)): regenerate with Scripts/fuzz.sh seeds")
            }
        }
        let genuineInputs = genuine
        FuzzTarget.run { bytes in
            guard case .success(let signingInput) = verify(chainVerifier, bytes) else { return }
            FuzzTarget.require(genuineInputs.contains(signingInput), "a JWS verified whose signed content is not a genuine proof's")
        }
    }

    static func trimmed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 { bytes.removeLast() }
        return bytes
    }

    /// Verifies `bytes` as the kind its payload claims; on success, the verified signing input.
    static func verify(_ chainVerifier: CertificateChainVerifier, _ bytes: [UInt8]) -> Result<[UInt8], SignedDataError> {
        var expectations = SignedDataExpectations(bundleId: "com.example.storegate", environments: [.production, .sandbox, .xcode, .localTesting, .test])
        var kind = ProofKind.signedTransaction
        do throws(SignedDataError) {
            let unverified = try UnverifiedSignedData(bytes: bytes)
            kind = unverified.kind
            switch unverified.payload {
            case .transaction(let payload):
                expectations.bundleId = payload.bundleId ?? expectations.bundleId
            case .renewalInfo:
                break
            case .appTransaction(let payload):
                expectations.bundleId = payload.bundleId ?? expectations.bundleId
                expectations.appAppleId = payload.appAppleId
            case .notification(let payload):
                expectations.bundleId = payload.subject.bundleId ?? expectations.bundleId
                expectations.appAppleId = payload.subject.appAppleId
            }
        } catch {
            // Unreadable: verification will say why.
        }
        let verifier = SignedDataVerifier(
            expectations: expectations,
            chainVerifier: chainVerifier,
            clock: { Date(timeIntervalSince1970: 1_700_000_000) }
        )
        let chosen = kind
        return runBlocking { () async -> Result<[UInt8], SignedDataError> in
            do throws(SignedDataError) {
                let raw: [UInt8]
                switch chosen {
                case .signedRenewalInfo: raw = try await verifier.verifyRenewalInfo(bytes: bytes).rawJWS
                case .appTransaction: raw = try await verifier.verifyAppTransaction(bytes: bytes).rawJWS
                case .notification: raw = try await verifier.verifyNotification(bytes: bytes).rawJWS
                default: raw = try await verifier.verifyTransaction(bytes: bytes).rawJWS
                }
                return .success(Array(try CompactJWS(bytes: raw).signingInput))
            } catch {
                return .failure(error)
            }
        }
    }
}

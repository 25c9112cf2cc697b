import Foundation
import StoreGateCore

/// A signed app transaction whose chain, signature and expectations ``SignedDataVerifier`` checked.
public struct VerifiedSignedAppTransaction: Sendable {
    /// The decoded payload.
    public let payload: AppTransaction
    /// How it was verified.
    public let details: SignedDataDetails
    /// The JWS exactly as received, for encrypted storage; never log it.
    public let rawJWS: [UInt8]

    /// The environment StoreGate reports for it.
    public var environment: Environment { details.environment }

    /// The proof in the ledger's shape: kind ``StoreGateCore/ProofKind/appTransaction``, no
    /// in-app transactions, dated by ``SignedDataDetails/signingTime``.
    ///
    /// - Throws: ``SignedDataError/Code/missingField`` when the payload has no `bundleId`.
    public func proof() throws(SignedDataError) -> VerifiedProof {
        guard let bundleId = payload.bundleId else {
            throw SignedDataError(.missingField, field: "bundleId", reason: "the app transaction has no bundleId")
        }
        return VerifiedProof(
            kind: .appTransaction,
            environment: details.environment,
            bundleId: bundleId,
            signedDate: details.signingTime,
            transactions: [],
            rawProof: rawJWS
        )
    }
}

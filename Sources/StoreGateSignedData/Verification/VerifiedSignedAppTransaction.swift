import Foundation
public import StoreGateCore

/// A signed app transaction whose chain, signature and expectations ``SignedDataVerifier`` checked.
public struct VerifiedSignedAppTransaction: Sendable {
    /// The decoded payload.
    public let payload: AppTransaction
    /// How it was verified.
    public let details: SignedDataDetails
    /// The JWS exactly as received, for encrypted storage; never log it.
    public let rawJWS: [UInt8]
    /// The app's bundle id (checked present in the payload step).
    public let bundleId: String

    /// The environment StoreGate reports for it.
    public var environment: AppStoreEnvironment { details.environment }

    init(payload: AppTransaction, details: SignedDataDetails, bundleId: String, rawJWS: [UInt8]) {
        self.payload = payload
        self.details = details
        self.bundleId = bundleId
        self.rawJWS = rawJWS
    }

    /// The proof in the ledger's shape: kind `ProofKind.appTransaction`, no
    /// in-app transactions, dated by ``SignedDataDetails/signingTime``.
    public var proof: VerifiedProof {
        VerifiedProof(
            kind: .appTransaction,
            environment: details.environment,
            bundleId: bundleId,
            signedDate: details.signingTime,
            transactions: [],
            rawProof: rawJWS
        )
    }
}

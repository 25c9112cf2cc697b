public import StoreGateCore

/// Signed data of any of the four kinds, verified.
public enum VerifiedSignedData: Sendable {
    case transaction(VerifiedSignedTransaction)
    case renewalInfo(VerifiedSignedRenewalInfo)
    case appTransaction(VerifiedSignedAppTransaction)
    case notification(VerifiedSignedNotification)

    /// How it was verified.
    public var details: SignedDataDetails {
        switch self {
        case .transaction(let verified): return verified.details
        case .renewalInfo(let verified): return verified.details
        case .appTransaction(let verified): return verified.details
        case .notification(let verified): return verified.details
        }
    }
}

extension SignedDataVerifier {
    /// Verifies a JWS of `kind` (a signed transaction, renewal info, app transaction or
    /// notification) against `expectations` (the verifier's own when `nil`): one entry point for
    /// callers that handle every kind, such as `storegate verify`.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed; ``SignedDataError/Code/invalidField``
    ///   when `kind` is not a kind of signed data.
    public func verify(
        bytes: [UInt8], as kind: ProofKind, expecting expectations: SignedDataExpectations? = nil
    ) async throws(SignedDataError) -> VerifiedSignedData {
        try await expecting(expectations).verify(bytes: bytes, as: kind, trace: nil)
    }

    func verify(bytes: [UInt8], as kind: ProofKind, trace: Trace?) async throws(SignedDataError) -> VerifiedSignedData {
        switch kind {
        case .signedTransaction: return .transaction(try await verifyTransaction(bytes: bytes, trace: trace))
        case .signedRenewalInfo: return .renewalInfo(try await verifyRenewalInfo(bytes: bytes, trace: trace))
        case .appTransaction: return .appTransaction(try await verifyAppTransaction(bytes: bytes, trace: trace))
        case .notification: return .notification(try await verifyNotification(bytes: bytes, trace: trace))
        default: throw SignedDataError(.invalidField, reason: "\(kind.rawValue) is not a kind of signed data")
        }
    }

    /// This verifier with other expectations (its own when `nil`): expectations are per call,
    /// as a receipt's are.
    public func expecting(_ expectations: SignedDataExpectations?) -> SignedDataVerifier {
        guard let expectations else { return self }
        var copy = self
        copy.expectations = expectations
        return copy
    }
}

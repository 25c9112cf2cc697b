public import StoreGateCore
public import StoreGateSignedData

/// Verifies the signed payloads (compact JWS) inside App Store Server API answers.
///
/// ``AppStoreServerAPIClient`` returns no signed payload it has not passed through this
/// protocol. StoreGate's JWS verifier (StoreGateSignedData) conforms; a caller may supply
/// another implementation, which then carries the responsibility of checking the signature,
/// the certificate chain to Apple's root, the bundle id and the environment.
public protocol SignedPayloadVerifying: Sendable {
    /// Verifies a `signedTransactionInfo`.
    func verifyTransaction(_ compactJWS: String) async throws -> VerifiedTransaction
    /// Verifies a `signedRenewalInfo`.
    func verifyRenewalInfo(_ compactJWS: String) async throws -> VerifiedRenewalInfo
    /// Verifies a notification's `signedPayload`, nested signed data included.
    func verifyNotification(_ compactJWS: String) async throws -> VerifiedNotification
    /// Verifies a `signedAppTransactionInfo` (Get App Transaction Info).
    ///
    /// A default implementation refuses every app transaction, so an implementation written
    /// before this requirement fails closed on that endpoint instead of believing it.
    func verifyAppTransaction(_ compactJWS: String) async throws -> VerifiedSignedAppTransaction
}

extension SignedPayloadVerifying {
    /// Refuses: this verifier does not verify app transactions.
    public func verifyAppTransaction(_ compactJWS: String) async throws -> VerifiedSignedAppTransaction {
        throw AppStoreClientError(.signedPayloadRejected, reason: "this verifier does not verify signed app transactions")
    }
}

/// StoreGate's own JWS verifier as a ``SignedPayloadVerifying``: chain to Apple Root CA - G3
/// (or an enabled opt-in anchor), ES256 signature, and the verifier's
/// ``StoreGateSignedData/SignedDataExpectations`` (bundle id, environments).
///
/// A wrapper rather than a conformance of `SignedDataVerifier` itself, so the verifier's own
/// `verifyTransaction(_:)` keeps returning its richer types wherever both modules are imported.
public struct SignedDataPayloadVerifier: SignedPayloadVerifying {
    /// The wrapped JWS verifier.
    public let verifier: SignedDataVerifier
    /// The environment every payload must claim (the client's: a sandbox history holds
    /// sandbox payloads only); `nil` leaves it to the verifier's expectations. Checked on the
    /// claim, so it holds for proofs an opt-in anchor signed too (which report `Test`).
    public let claimedEnvironment: AppStoreEnvironment?

    /// Creates a value from its parts.
    public init(_ verifier: SignedDataVerifier, claimedEnvironment: AppStoreEnvironment? = nil) {
        self.verifier = verifier
        self.claimedEnvironment = claimedEnvironment
    }

    /// Verifies the JWS with the wrapped verifier and returns it in the ledger's shape.
    public func verifyTransaction(_ compactJWS: String) async throws -> VerifiedTransaction {
        let verified = try await verifier.verifyTransaction(bytes: Array(compactJWS.utf8))
        try checkClaim(verified.details)
        return verified.transaction
    }

    /// Verifies the JWS with the wrapped verifier and returns it in the ledger's shape.
    public func verifyRenewalInfo(_ compactJWS: String) async throws -> VerifiedRenewalInfo {
        let verified = try await verifier.verifyRenewalInfo(bytes: Array(compactJWS.utf8))
        try checkClaim(verified.details)
        return verified.renewalInfo
    }

    /// Verifies the JWS with the wrapped verifier and returns it in the ledger's shape.
    public func verifyNotification(_ compactJWS: String) async throws -> VerifiedNotification {
        let verified = try await verifier.verifyNotification(bytes: Array(compactJWS.utf8))
        try checkClaim(verified.details)
        return verified.notification
    }

    /// Verifies the JWS with the wrapped verifier.
    public func verifyAppTransaction(_ compactJWS: String) async throws -> VerifiedSignedAppTransaction {
        let verified = try await verifier.verifyAppTransaction(bytes: Array(compactJWS.utf8))
        try checkClaim(verified.details)
        return verified
    }

    private func checkClaim(_ details: SignedDataDetails) throws(SignedDataError) {
        if let claimedEnvironment, details.claimedEnvironment != claimedEnvironment {
            throw SignedDataError(
                .environmentNotAccepted, field: "environment",
                reason: "the payload claims \(details.claimedEnvironment), and this answer is from \(claimedEnvironment)"
            )
        }
    }
}

import StoreGateCore

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
}

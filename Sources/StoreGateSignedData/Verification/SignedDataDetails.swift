public import Foundation
public import StoreGateCore

/// How one JWS was verified: what the report of `storegate verify` prints.
public struct SignedDataDetails: Sendable, Hashable {
    /// Where the time the certificates were checked at came from.
    public enum SigningTimeSource: String, Sendable, Hashable, Codable {
        /// The payload's `signedDate`.
        case signedDate
        /// An app transaction without `signedDate`: its `receiptCreationDate` (as Apple's libraries do).
        case receiptCreationDate
        /// A notification without `signedDate` (early 2022 sandbox notifications): the latest
        /// `signedDate` of its nested signed data, verified first.
        case nestedSignedDate
        /// Nothing in the payload dates it: the verifier's clock.
        case clock
    }

    /// What kind of signed data this is.
    public let kind: ProofKind
    /// The protected header.
    public let header: JWSHeader
    /// The environment the payload claims.
    public let claimedEnvironment: AppStoreEnvironment
    /// The environment StoreGate reports: the claim for Apple-anchored data, `Xcode` or `Test`
    /// for data anchored by an opt-in anchor.
    public let environment: AppStoreEnvironment
    /// When the payload says it was signed, if it says.
    public let signingTime: Date
    /// Where ``signingTime`` came from.
    public let signingTimeSource: SigningTimeSource
    /// The time the certificate chain was checked at (``signingTime`` unless the verifier
    /// was told otherwise).
    public let validationTime: Date
    /// What anchored the chain.
    public let anchor: ValidatedSigner.Anchor
    /// The validated chain, leaf first.
    public let chain: [ValidatedSigner.CertificateSummary]
    /// Whether the chain came from the chain cache (no certificate was parsed).
    public let chainCacheHit: Bool
}

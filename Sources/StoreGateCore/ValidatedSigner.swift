public import Crypto
public import Foundation
import SwiftASN1
public import X509
package import _CryptoExtras

/// The outcome of a successful chain validation: the signing key a proof's signature must
/// verify with, and what anchored it.
///
/// Only ``CertificateChainVerifier`` creates one. It is cached, so a second proof signed by
/// the same certificates pays only for its own signature check.
public struct ValidatedSigner: Sendable {
    /// What the chain ended in.
    public enum Anchor: Hashable, Sendable {
        /// A pinned Apple root.
        case apple
        /// An opt-in anchor enabled by configuration.
        case optIn
    }

    /// A certificate of the validated chain, summarised for reports.
    public struct CertificateSummary: Hashable, Sendable, Codable {
        public let subject: String
        public let issuer: String
        public let serialNumber: String
        public let notValidBefore: Date
        public let notValidAfter: Date
        public let sha256: String
    }

    /// The leaf's public key.
    public let publicKey: Certificate.PublicKey
    /// The leaf's key as RSA, when it is one (app receipts).
    package let rsaPublicKey: _RSA.Signing.PublicKey?
    /// The leaf's key as P-256, when it is one (StoreKit 2 JWS).
    public let p256PublicKey: P256.Signing.PublicKey?
    /// The leaf's issuer, DER-encoded (for matching a PKCS#7 signer identifier).
    public let leafIssuerDER: [UInt8]
    /// The leaf's serial number bytes.
    public let leafSerialNumber: [UInt8]
    /// What anchored the chain.
    public let anchor: Anchor
    /// The validated chain, leaf first.
    public let chain: [CertificateSummary]
    /// The span in which every certificate of the chain is valid.
    public let validFrom: Date
    public let validUntil: Date

    /// The environment to report for a proof that claims `claimed`: what it claims when an
    /// Apple root anchored it; ``AppStoreEnvironment/xcode`` or ``AppStoreEnvironment/test`` when an opt-in
    /// anchor did, so nothing verified by a test anchor ever passes as production.
    public func reportedEnvironment(claimed: AppStoreEnvironment) -> AppStoreEnvironment {
        switch anchor {
        case .apple: return claimed
        case .optIn: return claimed == .xcode ? .xcode : .test
        }
    }

    /// Whether `time` lies in the span every certificate of the chain is valid.
    public func isValid(at time: Date) -> Bool {
        validFrom <= time && time <= validUntil
    }

    init(chain certificates: [Certificate], fingerprints: [Fingerprint], anchor: Anchor) throws(ChainError) {
        guard let leaf = certificates.first else {
            throw ChainError(.noCertificates, reason: "empty validated chain")
        }
        self.publicKey = leaf.publicKey
        self.rsaPublicKey = _RSA.Signing.PublicKey(leaf.publicKey)
        self.p256PublicKey = P256.Signing.PublicKey(leaf.publicKey)
        do {
            var serializer = DER.Serializer()
            try serializer.serialize(leaf.issuer)
            self.leafIssuerDER = serializer.serializedBytes
        } catch {
            throw ChainError(.malformedCertificate, reason: "leaf issuer cannot be encoded")
        }
        self.leafSerialNumber = leaf.serialNumber.bytes.map { $0 }
        self.anchor = anchor
        var summaries: [CertificateSummary] = []
        for (certificate, fingerprint) in zip(certificates, fingerprints) {
            summaries.append(CertificateSummary(
                subject: certificate.subject.description,
                issuer: certificate.issuer.description,
                serialNumber: Hex.encode(certificate.serialNumber.bytes),
                notValidBefore: certificate.notValidBefore,
                notValidAfter: certificate.notValidAfter,
                sha256: fingerprint.description
            ))
        }
        self.chain = summaries
        self.validFrom = certificates.map(\.notValidBefore).max() ?? .distantFuture
        self.validUntil = certificates.map(\.notValidAfter).min() ?? .distantPast
    }
}

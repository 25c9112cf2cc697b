import Crypto
public import X509
import SwiftASN1

/// A certificate taken from a proof, not yet trusted.
public struct CandidateCertificate: Sendable, Hashable {
    /// The DER bytes as they appeared in the proof.
    public let der: [UInt8]
    /// The parsed certificate.
    public let certificate: Certificate
    /// SHA-256 of ``der``.
    public let fingerprint: Fingerprint

    /// Parses a certificate from DER.
    ///
    /// - Throws: ``ChainError/Code/malformedCertificate`` when `der` is not an X.509 certificate.
    public init(der: [UInt8]) throws(ChainError) {
        do {
            self.certificate = try Certificate(derEncoded: der)
        } catch {
            throw ChainError(.malformedCertificate, reason: "embedded certificate is not DER X.509")
        }
        self.der = der
        self.fingerprint = Fingerprint(of: der)
    }
}

/// The certificates a proof carries and which of them signed it.
public struct CandidateChain: Sendable {
    /// Every certificate embedded in the proof, in the proof's order.
    public var certificates: [CandidateCertificate]
    /// Index of the signer in ``certificates``.
    public var leafIndex: Int
    /// Whether the proof must list its chain in order, leaf first and root last (JWS `x5c`).
    /// App receipts carry an unordered SET and leave this `false`.
    public var mustBeOrdered: Bool

    public init(certificates: [CandidateCertificate], leafIndex: Int, mustBeOrdered: Bool) {
        self.certificates = certificates
        self.leafIndex = leafIndex
        self.mustBeOrdered = mustBeOrdered
    }
}

/// Identifies a set of certificates for the chain cache, without parsing them.
///
/// Built from whatever bytes determine the certificates (the receipt's certificate SET, the
/// JWS `x5c` strings) and the policy, so a cache hit costs one SHA-256 over a few KB.
public struct ChainCacheKey: Hashable, Sendable {
    private let digest: SHA256.Digest

    public init(policy: ChainPolicy, material: [ArraySlice<UInt8>]) {
        var hasher = SHA256()
        hasher.update(data: Array(policy.name.utf8))
        for part in material {
            var length = UInt64(part.count).bigEndian
            withUnsafeBytes(of: &length) { hasher.update(bufferPointer: $0) }
            part.withUnsafeBytes { hasher.update(bufferPointer: $0) }
        }
        self.digest = hasher.finalize()
    }
}

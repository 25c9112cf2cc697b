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
/// JWS `x5c` strings) and the policy: it holds those exact bytes, each part after its length,
/// and two keys are equal only when every byte is. A lookup hashes a sample of them and
/// compares the few KB once (`ExactBytes`), instead of running SHA-256 over them on every
/// verification.
public struct ChainCacheKey: Hashable, Sendable {
    private let key: ExactBytes

    /// - Parameters:
    ///   - policy: The chain policy the certificates are validated under.
    ///   - material: The bytes that determine the certificates, in the proof's order.
    public init(policy: ChainPolicy, material: [some Collection<UInt8>]) {
        let name = policy.name.utf8
        var bytes: [UInt8] = []
        bytes.reserveCapacity(8 + name.count + material.reduce(0) { $0 + 8 + $1.count })
        func append(_ part: some Collection<UInt8>) {
            withUnsafeBytes(of: UInt64(part.count).bigEndian) { bytes.append(contentsOf: $0) }
            bytes.append(contentsOf: part)
        }
        append(name)
        for part in material {
            append(part)
        }
        self.key = ExactBytes(bytes[...])
    }
}

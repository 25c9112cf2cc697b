public import Crypto
public import Foundation
public import StoreGateCore
import SwiftASN1
import Synchronization
public import X509
public import _CryptoExtras

/// A certificate authority shaped like Apple's, for minting proofs in tests.
///
/// root (self-signed) → intermediate carrying the WWDR marker 1.2.840.113635.100.6.2.1 →
/// leaf carrying the receipt-signing marker 1.2.840.113635.100.6.11.1. RSA-2048 for app
/// receipts, P-256 for StoreKit 2 JWS, as Apple does. ``Shape`` bends any of it, so tests can
/// build the chains an attacker would: markers missing, validity windows off, a foreign root.
public struct TestCertificateAuthority: Sendable {
    /// Which keys the chain uses.
    public enum KeyKind: Sendable, Hashable {
        /// RSA-2048 throughout (app receipts).
        case rsa2048
        /// P-256 throughout (StoreKit 2 JWS).
        case p256
    }

    /// How the chain deviates from Apple's shape; the default deviates in nothing.
    public struct Shape: Sendable, Hashable {
        public var leafHasMarker = true
        public var intermediateHasMarker = true
        public var rootValidity: ClosedRange<Date>
        public var intermediateValidity: ClosedRange<Date>
        public var leafValidity: ClosedRange<Date>
        /// A distinguishing word in every subject, so two authorities never share names.
        public var label: String

        public init(label: String = "StoreGate Test") {
            let start = Date(timeIntervalSince1970: 1_262_304_000)  // 2010-01-01
            let end = Date(timeIntervalSince1970: 4_102_444_800)  // 2100-01-01
            self.rootValidity = start...end
            self.intermediateValidity = start...end
            self.leafValidity = start...end
            self.label = label
        }
    }

    /// A certificate with its DER encoding and private key.
    public struct Issued: Sendable {
        public let certificate: Certificate
        public let der: [UInt8]
        public let privateKey: Certificate.PrivateKey
        public let rsaKey: _RSA.Signing.PrivateKey?
        public let p256Key: P256.Signing.PrivateKey?

        /// SHA-256 of ``der``.
        public var fingerprint: Fingerprint { Fingerprint(of: der) }
    }

    public let keyKind: KeyKind
    public let shape: Shape
    public let root: Issued
    public let intermediate: Issued
    public let leaf: Issued

    /// The chain as a proof embeds it: leaf, intermediate, root.
    public var chainDER: [[UInt8]] { [leaf.der, intermediate.der, root.der] }

    /// A trust store with this authority's root enabled as an opt-in anchor.
    public func trustStore() throws -> TrustStore {
        var store = TrustStore()
        try store.addOptInAnchor(der: root.der)
        return store
    }

    /// Creates a new authority with fresh keys.
    public init(keyKind: KeyKind, shape: Shape = Shape()) throws {
        self.keyKind = keyKind
        self.shape = shape
        let rootKey = try Self.makeKey(keyKind)
        let intermediateKey = try Self.makeKey(keyKind)
        let leafKey = try Self.makeKey(keyKind)
        let rootName = try DistinguishedName {
            CountryName("US")
            OrganizationName("StoreGate")
            OrganizationalUnitName("\(shape.label) Certification Authority")
            CommonName("\(shape.label) Root CA")
        }
        let intermediateName = try DistinguishedName {
            CountryName("US")
            OrganizationName("StoreGate")
            OrganizationalUnitName("G1")
            CommonName("\(shape.label) Worldwide Developer Relations Certification Authority")
        }
        let leafName = try DistinguishedName {
            CountryName("US")
            OrganizationName("StoreGate")
            OrganizationalUnitName("\(shape.label) Worldwide Developer Relations")
            CommonName("\(shape.label) Mac App Store and iTunes Store Receipt Signing")
        }
        let algorithm: Certificate.SignatureAlgorithm = keyKind == .rsa2048 ? .sha256WithRSAEncryption : .ecdsaWithSHA256

        let rootCertificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: rootKey.privateKey.publicKey,
            notValidBefore: shape.rootValidity.lowerBound,
            notValidAfter: shape.rootValidity.upperBound,
            issuer: rootName,
            subject: rootName,
            signatureAlgorithm: algorithm,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                SubjectKeyIdentifier(hash: rootKey.privateKey.publicKey)
            },
            issuerPrivateKey: rootKey.privateKey
        )
        let intermediateCertificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: intermediateKey.privateKey.publicKey,
            notValidBefore: shape.intermediateValidity.lowerBound,
            notValidAfter: shape.intermediateValidity.upperBound,
            issuer: rootName,
            subject: intermediateName,
            signatureAlgorithm: algorithm,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true, cRLSign: true))
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: rootKey.privateKey.publicKey).keyIdentifier)
                SubjectKeyIdentifier(hash: intermediateKey.privateKey.publicKey)
                if shape.intermediateHasMarker {
                    Certificate.Extension(oid: AppleOID.wwdrIntermediate, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: rootKey.privateKey
        )
        let leafCertificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: leafKey.privateKey.publicKey,
            notValidBefore: shape.leafValidity.lowerBound,
            notValidAfter: shape.leafValidity.upperBound,
            issuer: intermediateName,
            subject: leafName,
            signatureAlgorithm: algorithm,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                AuthorityKeyIdentifier(keyIdentifier: SubjectKeyIdentifier(hash: intermediateKey.privateKey.publicKey).keyIdentifier)
                if shape.leafHasMarker {
                    Certificate.Extension(oid: AppleOID.receiptSigning, critical: false, value: [0x05, 0x00])
                }
            },
            issuerPrivateKey: intermediateKey.privateKey
        )
        self.root = try Self.issued(rootCertificate, rootKey)
        self.intermediate = try Self.issued(intermediateCertificate, intermediateKey)
        self.leaf = try Self.issued(leafCertificate, leafKey)
    }

    /// A self-signed certificate that carries both Apple markers: the "self-signed chain" attack.
    public static func selfSigned(keyKind: KeyKind, label: String = "Self-Signed") throws -> Issued {
        let key = try makeKey(keyKind)
        let name = try DistinguishedName {
            CountryName("US")
            OrganizationName("Apple Inc.")
            CommonName("\(label) Mac App Store and iTunes Store Receipt Signing")
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key.privateKey.publicKey,
            notValidBefore: Date(timeIntervalSince1970: 1_262_304_000),
            notValidAfter: Date(timeIntervalSince1970: 4_102_444_800),
            issuer: name,
            subject: name,
            signatureAlgorithm: keyKind == .rsa2048 ? .sha256WithRSAEncryption : .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(digitalSignature: true, keyCertSign: true))
                Certificate.Extension(oid: AppleOID.wwdrIntermediate, critical: false, value: [0x05, 0x00])
                Certificate.Extension(oid: AppleOID.receiptSigning, critical: false, value: [0x05, 0x00])
            },
            issuerPrivateKey: key.privateKey
        )
        return try issued(certificate, key)
    }

    private struct Key {
        let privateKey: Certificate.PrivateKey
        let rsa: _RSA.Signing.PrivateKey?
        let p256: P256.Signing.PrivateKey?
    }

    private static func makeKey(_ kind: KeyKind) throws -> Key {
        switch kind {
        case .rsa2048:
            let key = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            return Key(privateKey: Certificate.PrivateKey(key), rsa: key, p256: nil)
        case .p256:
            let key = P256.Signing.PrivateKey()
            return Key(privateKey: Certificate.PrivateKey(key), rsa: nil, p256: key)
        }
    }

    private static func issued(_ certificate: Certificate, _ key: Key) throws -> Issued {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Issued(certificate: certificate, der: serializer.serializedBytes, privateKey: key.privateKey, rsaKey: key.rsa, p256Key: key.p256)
    }
}

extension TestCertificateAuthority {
    private static let cache = Mutex<[String: TestCertificateAuthority]>([:])

    /// A shared authority per key kind and label, created once per process: RSA key
    /// generation is slow, and most tests need only one well-formed authority.
    ///
    /// The authority is created under the lock, so tests starting together wait for one
    /// creation instead of each generating keys of their own: twenty server tests doing so at
    /// once kept both threads of the cooperative pool busy for seconds, and timing-sensitive
    /// tests elsewhere failed.
    public static func shared(_ keyKind: KeyKind, label: String = "StoreGate Test") throws -> TestCertificateAuthority {
        let key = "\(keyKind)-\(label)"
        return try cache.withLock { cache throws -> TestCertificateAuthority in
            if let existing = cache[key] { return existing }
            let created = try TestCertificateAuthority(keyKind: keyKind, shape: Shape(label: label))
            cache[key] = created
            return created
        }
    }
}

extension TestCertificateAuthority {
    /// The same authority with another certificate as its leaf (for signing with a rogue
    /// certificate, such as a self-signed one, through the same minters).
    public func replacingLeaf(with issued: Issued) -> TestCertificateAuthority {
        TestCertificateAuthority(keyKind: keyKind, shape: shape, root: root, intermediate: intermediate, leaf: issued)
    }

    private init(keyKind: KeyKind, shape: Shape, root: Issued, intermediate: Issued, leaf: Issued) {
        self.keyKind = keyKind
        self.shape = shape
        self.root = root
        self.intermediate = intermediate
        self.leaf = leaf
    }
}

extension TestCertificateAuthority {
    /// Another certificate for this authority's root: the same subject and key, a new serial
    /// number and validity (a CA re-issued, as the root in Apple's library test data is). To
    /// RFC 5280 it is the same trust anchor.
    public func reissuedRoot(validity: ClosedRange<Date>? = nil) throws -> Issued {
        let validity = validity ?? shape.rootValidity.lowerBound.addingTimeInterval(86_400)...shape.rootValidity.upperBound
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: root.certificate.publicKey,
            notValidBefore: validity.lowerBound,
            notValidAfter: validity.upperBound,
            issuer: root.certificate.subject,
            subject: root.certificate.subject,
            signatureAlgorithm: root.certificate.signatureAlgorithm,
            extensions: root.certificate.extensions,
            issuerPrivateKey: root.privateKey
        )
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return Issued(certificate: certificate, der: serializer.serializedBytes, privateKey: root.privateKey, rsaKey: root.rsaKey, p256Key: root.p256Key)
    }

    /// The same authority listing another certificate as its root in the proofs it mints.
    public func replacingRoot(with issued: Issued) -> TestCertificateAuthority {
        TestCertificateAuthority(keyKind: keyKind, shape: shape, root: issued, intermediate: intermediate, leaf: leaf)
    }
}

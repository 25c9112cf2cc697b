import Foundation
import SwiftASN1
public import X509

/// The roots a verifier may chain to: Apple's, pinned by fingerprint, and opt-in anchors.
///
/// Apple's roots are never shipped as files: a proof usually carries the root itself, and
/// a certificate whose SHA-256 fingerprint equals a pin becomes the anchor. For proofs that
/// omit the root, ``appleRoots`` can supply it (only certificates that match a pin are
/// accepted there). ``optInAnchors`` are anything else the operator enabled on purpose (a
/// test CA, Xcode's StoreKit Testing certificate); a proof verified by one is reported as
/// ``AppStoreEnvironment/xcode`` or ``AppStoreEnvironment/test``, never as production.
public struct TrustStore: Sendable {
    /// SHA-256 of Apple Inc. Root CA ("Apple Root CA"), the anchor of app receipts.
    public static let appleRootCA = Fingerprint(pinned: [
        0xB0, 0xB1, 0x73, 0x0E, 0xCB, 0xC7, 0xFF, 0x45, 0x05, 0x14, 0x2C, 0x49, 0xF1, 0x29, 0x5E, 0x6E,
        0xDA, 0x6B, 0xCA, 0xED, 0x7E, 0x2C, 0x68, 0xC5, 0xBE, 0x91, 0xB5, 0xA1, 0x10, 0x01, 0xF0, 0x24,
    ])

    /// SHA-256 of Apple Root CA - G3, the anchor of StoreKit 2 JWS and notifications.
    public static let appleRootCAG3 = Fingerprint(pinned: [
        0x63, 0x34, 0x3A, 0xBF, 0xB8, 0x9A, 0x6A, 0x03, 0xEB, 0xB5, 0x7E, 0x9B, 0x3F, 0x5F, 0xA7, 0xBE,
        0x7C, 0x4F, 0x5C, 0x75, 0x6F, 0x30, 0x17, 0xB3, 0xA8, 0xC4, 0x88, 0xC3, 0x65, 0x3E, 0x91, 0x79,
    ])

    /// Every pinned Apple root.
    public static let pinnedAppleRoots: Set<Fingerprint> = [appleRootCA, appleRootCAG3]

    /// A trusted certificate with its fingerprint.
    public struct Anchor: Sendable, Hashable {
        public let certificate: Certificate
        public let fingerprint: Fingerprint
    }

    /// Apple roots supplied as files, each matching a pin.
    public private(set) var appleRoots: [Anchor] = []
    /// Opt-in anchors: never Apple, never reported as production.
    public private(set) var optInAnchors: [Anchor] = []

    /// A store that trusts only Apple's pinned roots, as carried by the proofs.
    public init() {}

    /// Adds an Apple root certificate given as DER; it must match a pin.
    ///
    /// - Throws: ``ChainError/Code/notPinned`` when the certificate is not one of Apple's pinned roots.
    public mutating func addAppleRoot(der: [UInt8]) throws(ChainError) {
        let anchor = try Self.anchor(der)
        guard Self.pinnedAppleRoots.contains(anchor.fingerprint) else {
            throw ChainError(.notPinned, reason: "certificate \(anchor.fingerprint) is not a pinned Apple root")
        }
        appleRoots.append(anchor)
    }

    /// Enables an opt-in anchor given as DER (a test CA, Xcode's StoreKit certificate).
    ///
    /// A certificate matching an Apple pin is added as an Apple root instead.
    public mutating func addOptInAnchor(der: [UInt8]) throws(ChainError) {
        let anchor = try Self.anchor(der)
        if Self.pinnedAppleRoots.contains(anchor.fingerprint) {
            appleRoots.append(anchor)
        } else {
            optInAnchors.append(anchor)
        }
    }

    /// Loads every `.cer`, `.der`, `.crt` or `.pem` file in `directory`: those matching a pin
    /// become Apple roots, the others opt-in anchors (pointing StoreGate at the directory is
    /// the opt-in).
    ///
    /// - Throws: ``ChainError`` when the directory cannot be read or a file is not a certificate.
    public static func load(directory: String) throws(ChainError) -> TrustStore {
        var store = TrustStore()
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        } catch {
            throw ChainError(.malformedCertificate, reason: "cannot read trust directory \(directory)")
        }
        for name in names {
            let lower = name.lowercased()
            guard [".cer", ".der", ".crt", ".pem"].contains(where: { lower.hasSuffix($0) }) else { continue }
            let path = (directory as NSString).appendingPathComponent(name)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw ChainError(.malformedCertificate, reason: "cannot read \(name)")
            }
            try store.addCertificateFile(named: name, contents: Array(data))
        }
        return store
    }

    /// Adds one trust-directory file's certificate, as ``load(directory:)`` does for each file:
    /// PEM when the name ends in `.pem` or the contents start with `-----BEGIN`, DER otherwise;
    /// a certificate matching a pin becomes an Apple root, any other an opt-in anchor.
    ///
    /// - Parameters:
    ///   - name: The file name, for the PEM rule and error messages.
    ///   - contents: The file's bytes.
    /// - Throws: ``ChainError/Code/malformedCertificate`` when the file is not a certificate.
    public mutating func addCertificateFile(named name: String, contents: [UInt8]) throws(ChainError) {
        var der = contents
        if name.lowercased().hasSuffix(".pem") || contents.starts(with: Array("-----BEGIN".utf8)) {
            do {
                der = try PEMDocument(pemString: String(decoding: contents, as: UTF8.self)).derBytes
            } catch {
                throw ChainError(.malformedCertificate, reason: "\(name) is not a PEM certificate")
            }
        }
        do {
            try addOptInAnchor(der: der)
        } catch {
            throw ChainError(error.code, reason: "\(name): \(error.reason)")
        }
    }

    /// Fingerprints of every anchor, opt-in anchors first; part of chain-cache identity.
    public var anchorFingerprints: [Fingerprint] {
        optInAnchors.map(\.fingerprint) + appleRoots.map(\.fingerprint)
    }

    /// Whether the given certificate fingerprint is an opt-in anchor.
    public func isOptInAnchor(_ fingerprint: Fingerprint) -> Bool {
        optInAnchors.contains { $0.fingerprint == fingerprint }
    }

    /// Whether an opt-in anchor has this subject and key: a trust anchor is a name and a key
    /// (RFC 5280 §6.1.1 d), so a re-issued certificate for it names the same anchor.
    public func isOptInAnchor(named subject: DistinguishedName, key: Certificate.PublicKey) -> Bool {
        optInAnchors.contains { $0.certificate.subject == subject && $0.certificate.publicKey == key }
    }

    /// Every anchor: Apple root files, then opt-in anchors.
    public var anchors: [Anchor] { appleRoots + optInAnchors }

    private static func anchor(_ der: [UInt8]) throws(ChainError) -> Anchor {
        do {
            return Anchor(certificate: try Certificate(derEncoded: der), fingerprint: Fingerprint(of: der))
        } catch {
            throw ChainError(.malformedCertificate, reason: "not a DER X.509 certificate")
        }
    }
}


import SwiftASN1

/// The object identifiers a receipt's PKCS#7 structure uses.
enum PKCS7OID {
    /// id-signedData, 1.2.840.113549.1.7.2.
    static let signedData: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 2]
    /// id-data, 1.2.840.113549.1.7.1.
    static let data: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 7, 1]
    /// id-contentType signed attribute, 1.2.840.113549.1.9.3.
    static let contentTypeAttribute: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 3]
    /// id-messageDigest signed attribute, 1.2.840.113549.1.9.4.
    static let messageDigestAttribute: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 9, 4]

    /// SHA-1, 1.3.14.3.2.26.
    static let sha1: ASN1ObjectIdentifier = [1, 3, 14, 3, 2, 26]
    /// SHA-256, 2.16.840.1.101.3.4.2.1.
    static let sha256: ASN1ObjectIdentifier = [2, 16, 840, 1, 101, 3, 4, 2, 1]

    /// Bare rsaEncryption, 1.2.840.113549.1.1.1: what App Store receipts name as the signature algorithm.
    static let rsaEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 1]
    /// sha1WithRSAEncryption, 1.2.840.113549.1.1.5.
    static let sha1WithRSAEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 5]
    /// sha256WithRSAEncryption, 1.2.840.113549.1.1.11.
    static let sha256WithRSAEncryption: ASN1ObjectIdentifier = [1, 2, 840, 113549, 1, 1, 11]
}

/// The digest a receipt signature covers.
public enum ReceiptDigestAlgorithm: String, Hashable, Sendable, Codable {
    case sha1
    case sha256

    init?(oid: ASN1ObjectIdentifier) {
        switch oid {
        case PKCS7OID.sha1: self = .sha1
        case PKCS7OID.sha256: self = .sha256
        default: return nil
        }
    }
}

/// The signature algorithm a receipt's SignerInfo names.
public enum ReceiptSignatureAlgorithm: String, Hashable, Sendable, Codable {
    /// Bare `rsaEncryption`: RSA PKCS#1 v1.5 with the SignerInfo's digest algorithm.
    case rsaEncryption
    case sha1WithRSAEncryption
    case sha256WithRSAEncryption

    init?(oid: ASN1ObjectIdentifier) {
        switch oid {
        case PKCS7OID.rsaEncryption: self = .rsaEncryption
        case PKCS7OID.sha1WithRSAEncryption: self = .sha1WithRSAEncryption
        case PKCS7OID.sha256WithRSAEncryption: self = .sha256WithRSAEncryption
        default: return nil
        }
    }

    /// Whether this algorithm may be used with `digest`.
    func isCompatible(with digest: ReceiptDigestAlgorithm) -> Bool {
        switch self {
        case .rsaEncryption: return true
        case .sha1WithRSAEncryption: return digest == .sha1
        case .sha256WithRSAEncryption: return digest == .sha256
        }
    }
}

/// Reads the OID of an `AlgorithmIdentifier ::= SEQUENCE { algorithm OID, parameters ANY OPTIONAL }`.
func algorithmOID(_ node: ASN1Node) throws -> ASN1ObjectIdentifier {
    try BER.sequence(node, identifier: .sequence) { nodes in
        let oid = try ASN1ObjectIdentifier(berEncoded: &nodes)
        // Parameters: absent or NULL for every algorithm a receipt may name; anything else is
        // refused rather than ignored (it would be bytes no signature covers).
        if let parameters = nodes.next() {
            guard parameters.identifier == .null, case .primitive(let bytes) = parameters.content, bytes.isEmpty else {
                throw ASN1Error.invalidASN1Object(reason: "algorithm parameters are neither absent nor NULL")
            }
        }
        guard nodes.next() == nil else { throw ASN1Error.invalidASN1Object(reason: "trailing elements in AlgorithmIdentifier") }
        return oid
    }
}

import SwiftASN1

/// The PKCS#7 (CMS) SignedData of an app receipt, read with swift-asn1's BER parser.
///
/// ```
/// ContentInfo ::= SEQUENCE {
///     contentType ContentType,                       -- id-signedData
///     content [0] EXPLICIT ANY DEFINED BY contentType }
/// SignedData ::= SEQUENCE {
///     version CMSVersion,
///     digestAlgorithms SET OF DigestAlgorithmIdentifier,
///     encapContentInfo EncapsulatedContentInfo,
///     certificates [0] IMPLICIT CertificateSet OPTIONAL,
///     crls [1] IMPLICIT RevocationInfoChoices OPTIONAL,
///     signerInfos SET OF SignerInfo }
/// EncapsulatedContentInfo ::= SEQUENCE {
///     eContentType ContentType,                      -- id-data
///     eContent [0] EXPLICIT OCTET STRING OPTIONAL }
/// ```
///
/// Real receipts need BER: Xcode's use indefinite lengths and a constructed (chunked)
/// eContent OCTET STRING; App Store receipts carry a certificate SET that is not DER-sorted
/// and name bare `rsaEncryption`. All of it is accepted here; nothing is trusted yet.
struct PKCS7SignedData {
    /// CMSVersion: 1 when every signer is named by issuer and serial number, 3 when one is
    /// named by subject key identifier (RFC 5652 §5.1; checked by the verifier's structure step).
    let version: Int
    let digestAlgorithms: [ASN1ObjectIdentifier]
    let contentType: ASN1ObjectIdentifier
    /// The encapsulated content (the receipt payload), joined if it was chunked.
    let content: [UInt8]?
    /// Each embedded certificate's bytes, in the order found.
    let certificates: [ArraySlice<UInt8>]
    let signerInfos: [PKCS7SignerInfo]

    /// Parses a ContentInfo holding SignedData.
    ///
    /// - Throws: ``ReceiptError`` at the structure step.
    init(contentInfo bytes: [UInt8]) throws(ReceiptError) {
        let root: ASN1Node
        do {
            root = try BER.parse(bytes)
        } catch {
            throw ReceiptError(.malformedPKCS7, field: "ContentInfo", reason: "not BER/DER")
        }
        guard root.encodedBytes.count == bytes.count else {
            throw ReceiptError(.malformedPKCS7, field: "ContentInfo", reason: "trailing bytes after the ContentInfo")
        }
        var isSignedData = true
        do {
            self = try BER.sequence(root, identifier: .sequence) { nodes in
                let contentType = try ASN1ObjectIdentifier(berEncoded: &nodes)
                guard contentType == PKCS7OID.signedData else {
                    isSignedData = false
                    throw ASN1Error.invalidASN1Object(reason: "not signedData")
                }
                return try BER.explicitlyTagged(&nodes, tagNumber: 0, tagClass: .contextSpecific) { node in
                    try PKCS7SignedData(signedData: node)
                }
            }
        } catch let error as ReceiptError {
            throw error
        } catch {
            if !isSignedData {
                throw ReceiptError(.notSignedData, field: "ContentInfo.contentType", reason: "the ContentInfo is not SignedData")
            }
            throw ReceiptError(.malformedPKCS7, field: "SignedData", reason: "the SignedData cannot be decoded")
        }
    }

    private init(signedData node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            let version = try Int(berEncoded: &nodes)
            guard let digestSet = nodes.next(), digestSet.identifier == .set, case .constructed(let digestNodes) = digestSet.content else {
                throw ASN1Error.invalidASN1Object(reason: "digestAlgorithms")
            }
            let digestAlgorithms = try digestNodes.map { try algorithmOID($0) }

            guard let encapsulated = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "encapContentInfo") }
            let (contentType, content) = try BER.sequence(encapsulated, identifier: .sequence) { parts -> (ASN1ObjectIdentifier, [UInt8]?) in
                let type = try ASN1ObjectIdentifier(berEncoded: &parts)
                let content = try BER.optionalExplicitlyTagged(&parts, tagNumber: 0, tagClass: .contextSpecific) { inner in
                    Array(try ASN1OctetString(berEncoded: inner).bytes)
                }
                return (type, content)
            }

            var next = nodes.next()
            var certificates: [ArraySlice<UInt8>] = []
            if let node = next, node.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                guard case .constructed(let certificateNodes) = node.content else {
                    throw ASN1Error.invalidASN1Object(reason: "certificates")
                }
                for certificate in certificateNodes {
                    certificates.append(certificate.encodedBytes)
                }
                next = nodes.next()
            }
            if let node = next, node.identifier == ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific) {
                next = nodes.next()  // CRLs are not used
            }
            guard let signerSet = next, signerSet.identifier == .set, case .constructed(let signerNodes) = signerSet.content else {
                throw ASN1Error.invalidASN1Object(reason: "signerInfos")
            }
            let signerInfos = try signerNodes.map { try PKCS7SignerInfo(berEncoded: $0) }
            guard nodes.next() == nil else { throw ASN1Error.invalidASN1Object(reason: "trailing elements after signerInfos") }
            return PKCS7SignedData(
                version: version,
                digestAlgorithms: digestAlgorithms,
                contentType: contentType,
                content: content,
                certificates: certificates,
                signerInfos: signerInfos
            )
        }
    }

    private init(
        version: Int,
        digestAlgorithms: [ASN1ObjectIdentifier],
        contentType: ASN1ObjectIdentifier,
        content: [UInt8]?,
        certificates: [ArraySlice<UInt8>],
        signerInfos: [PKCS7SignerInfo]
    ) {
        self.version = version
        self.digestAlgorithms = digestAlgorithms
        self.contentType = contentType
        self.content = content
        self.certificates = certificates
        self.signerInfos = signerInfos
    }
}

import SwiftASN1

/// One signer of a PKCS#7 SignedData.
///
/// ```
/// SignerInfo ::= SEQUENCE {
///     version CMSVersion,
///     sid SignerIdentifier,
///     digestAlgorithm DigestAlgorithmIdentifier,
///     signedAttrs [0] IMPLICIT SignedAttributes OPTIONAL,
///     signatureAlgorithm SignatureAlgorithmIdentifier,
///     signature SignatureValue,
///     unsignedAttrs [1] IMPLICIT UnsignedAttributes OPTIONAL }
/// SignerIdentifier ::= CHOICE {
///     issuerAndSerialNumber IssuerAndSerialNumber,
///     subjectKeyIdentifier [0] SubjectKeyIdentifier }
/// IssuerAndSerialNumber ::= SEQUENCE { issuer Name, serialNumber CertificateSerialNumber }
/// ```
struct PKCS7SignerInfo {
    enum Identifier {
        /// The issuer Name as encoded, and the serial number's INTEGER content bytes.
        case issuerAndSerialNumber(issuer: ASN1Node, serialNumber: ArraySlice<UInt8>)
        case subjectKeyIdentifier(ArraySlice<UInt8>)
    }

    let version: Int
    let identifier: Identifier
    let digestAlgorithm: ASN1ObjectIdentifier
    /// The signed attributes as `Attribute`s (type, first value), when present.
    let signedAttributes: [(type: ASN1ObjectIdentifier, value: ASN1Node)]?
    /// The signed attributes re-encoded with the SET tag, which is what the signature covers.
    let signedAttributesDER: [UInt8]?
    let signatureAlgorithm: ASN1ObjectIdentifier
    let signature: [UInt8]

    init(berEncoded node: ASN1Node) throws {
        self = try BER.sequence(node, identifier: .sequence) { nodes in
            let version = try Int(berEncoded: &nodes)
            guard let sidNode = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "missing sid") }
            let identifier: Identifier
            if sidNode.identifier == .sequence {
                identifier = try BER.sequence(sidNode, identifier: .sequence) { sid in
                    guard let issuer = sid.next(), issuer.identifier == .sequence,
                          let serial = sid.next(), serial.identifier == .integer,
                          case .primitive(let serialBytes) = serial.content
                    else { throw ASN1Error.invalidASN1Object(reason: "bad IssuerAndSerialNumber") }
                    return .issuerAndSerialNumber(issuer: issuer, serialNumber: serialBytes)
                }
            } else if sidNode.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                let octets = try ASN1OctetString(berEncoded: sidNode, withIdentifier: sidNode.identifier)
                identifier = .subjectKeyIdentifier(octets.bytes)
            } else {
                throw ASN1Error.invalidASN1Object(reason: "unknown SignerIdentifier")
            }
            guard let digestNode = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "missing digestAlgorithm") }
            let digestAlgorithm = try algorithmOID(digestNode)

            var next = nodes.next()
            var signedAttributes: [(type: ASN1ObjectIdentifier, value: ASN1Node)]?
            var signedAttributesDER: [UInt8]?
            if let attributesNode = next, attributesNode.identifier == ASN1Identifier(tagWithNumber: 0, tagClass: .contextSpecific) {
                guard case .constructed(let attributeNodes) = attributesNode.content else {
                    throw ASN1Error.invalidASN1Object(reason: "signedAttrs not constructed")
                }
                var attributes: [(type: ASN1ObjectIdentifier, value: ASN1Node)] = []
                for attribute in attributeNodes {
                    try BER.sequence(attribute, identifier: .sequence) { parts in
                        let type = try ASN1ObjectIdentifier(berEncoded: &parts)
                        guard let values = parts.next(), case .constructed(let valueNodes) = values.content,
                              let first = valueNodes.first(where: { _ in true })
                        else { throw ASN1Error.invalidASN1Object(reason: "attribute without values") }
                        attributes.append((type, first))
                    }
                }
                signedAttributes = attributes
                // The signature covers the DER SET OF, not the [0] IMPLICIT tag (RFC 5652 §5.4).
                var der = Array(attributesNode.encodedBytes)
                guard !der.isEmpty, der[0] == 0xA0 else { throw ASN1Error.invalidASN1Object(reason: "signedAttrs is not DER") }
                der[0] = 0x31
                signedAttributesDER = der
                next = nodes.next()
            }
            guard let signatureAlgorithmNode = next else { throw ASN1Error.invalidASN1Object(reason: "missing signatureAlgorithm") }
            let signatureAlgorithm = try algorithmOID(signatureAlgorithmNode)
            let signature = try ASN1OctetString(berEncoded: &nodes)
            // unsignedAttrs [1] are not used (nor signed); nothing else may follow.
            if let unsigned = nodes.next(), unsigned.identifier != ASN1Identifier(tagWithNumber: 1, tagClass: .contextSpecific) {
                throw ASN1Error.invalidASN1Object(reason: "unexpected element after the signature")
            }
            guard nodes.next() == nil else { throw ASN1Error.invalidASN1Object(reason: "trailing elements in SignerInfo") }
            return PKCS7SignerInfo(
                version: version,
                identifier: identifier,
                digestAlgorithm: digestAlgorithm,
                signedAttributes: signedAttributes,
                signedAttributesDER: signedAttributesDER,
                signatureAlgorithm: signatureAlgorithm,
                signature: Array(signature.bytes)
            )
        }
    }

    private init(
        version: Int,
        identifier: Identifier,
        digestAlgorithm: ASN1ObjectIdentifier,
        signedAttributes: [(type: ASN1ObjectIdentifier, value: ASN1Node)]?,
        signedAttributesDER: [UInt8]?,
        signatureAlgorithm: ASN1ObjectIdentifier,
        signature: [UInt8]
    ) {
        self.version = version
        self.identifier = identifier
        self.digestAlgorithm = digestAlgorithm
        self.signedAttributes = signedAttributes
        self.signedAttributesDER = signedAttributesDER
        self.signatureAlgorithm = signatureAlgorithm
        self.signature = signature
    }
}

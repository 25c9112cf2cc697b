import Crypto
import Foundation
public import StoreGateCore
import SwiftASN1
import X509
import _CryptoExtras

/// An app receipt decoded from its PKCS#7 container, nothing checked yet.
///
/// Good for inspecting a receipt; ``ReceiptVerifier`` is what decides whether it is genuine.
public struct UnverifiedReceipt: Sendable {
    /// The decoded payload.
    public let receipt: AppReceipt
    /// The signer's digest algorithm.
    public let digestAlgorithm: ReceiptDigestAlgorithm?
    /// The signer's signature algorithm.
    public let signatureAlgorithm: ReceiptSignatureAlgorithm?
    /// Every embedded certificate's DER bytes, in the order found.
    public let certificates: [[UInt8]]
    /// Whether the SignerInfo carries signed attributes (App Store receipts do not).
    public let hasSignedAttributes: Bool

    /// Decodes a receipt (DER/BER bytes) without verifying it.
    ///
    /// - Throws: ``ReceiptError`` at the input, structure or payload step.
    public init(der: [UInt8], limits: Limits = .default) throws(ReceiptError) {
        let container = try ReceiptContainer(der: der, limits: limits)
        self.receipt = try AppReceipt(payload: container.content, limits: limits)
        let signer = container.signedData.signerInfos.first
        self.digestAlgorithm = signer.flatMap { ReceiptDigestAlgorithm(oid: $0.digestAlgorithm) }
        self.signatureAlgorithm = signer.flatMap { ReceiptSignatureAlgorithm(oid: $0.signatureAlgorithm) }
        self.certificates = container.signedData.certificates.map { Array($0) }
        self.hasSignedAttributes = signer?.signedAttributes != nil
    }

    /// The bytes of base64 receipt text as apps send it (the standard alphabet, line breaks and
    /// other ASCII whitespace ignored, padding optional), within the size limit.
    ///
    /// - Throws: ``ReceiptError`` `empty`, `too_large` or `not_base64`, in the input step.
    public static func der(base64 text: some StringProtocol, limits: Limits = .default) throws(ReceiptError) -> [UInt8] {
        try ReceiptContainer.decodeBase64(text, limits: limits)
    }

    /// Decodes base64 text (line breaks allowed) holding a receipt.
    public init(base64: some StringProtocol, limits: Limits = .default) throws(ReceiptError) {
        try self.init(der: try ReceiptContainer.decodeBase64(base64, limits: limits), limits: limits)
    }
}

/// The checked PKCS#7 container of a receipt: SignedData over id-data with content present.
struct ReceiptContainer {
    let signedData: PKCS7SignedData
    let content: [UInt8]

    init(der: [UInt8], limits: Limits) throws(ReceiptError) {
        guard !der.isEmpty else { throw ReceiptError(.empty, reason: "the receipt is empty") }
        guard der.count <= limits.maxReceiptBytes else {
            throw ReceiptError(.tooLarge, reason: "\(der.count) bytes is over the \(limits.maxReceiptBytes)-byte limit")
        }
        let signedData = try PKCS7SignedData(contentInfo: der)
        guard signedData.contentType == PKCS7OID.data else {
            throw ReceiptError(.unsupportedContentType, field: "EncapsulatedContentInfo.eContentType", reason: "the content is not id-data")
        }
        guard let content = signedData.content else {
            throw ReceiptError(.missingContent, field: "EncapsulatedContentInfo.eContent", reason: "the SignedData carries no receipt")
        }
        // CMSVersion, RFC 5652 §5.1 and §5.3: a SignerInfo naming its certificate by issuer and
        // serial number is version 1, by subject key identifier 3; SignedData is 3 when any
        // signer is, else 1. Unsigned bytes, so they are checked exactly rather than ignored.
        var usesKeyIdentifier = false
        for (index, signer) in signedData.signerInfos.enumerated() {
            let expected: Int
            if case .subjectKeyIdentifier = signer.identifier { expected = 3; usesKeyIdentifier = true } else { expected = 1 }
            guard signer.version == expected else {
                throw ReceiptError(.malformedPKCS7, field: "SignerInfo[\(index)].version", reason: "version \(signer.version); RFC 5652 requires \(expected) for this signer identifier")
            }
        }
        let expectedVersion = usesKeyIdentifier ? 3 : 1
        guard signedData.version == expectedVersion else {
            throw ReceiptError(.malformedPKCS7, field: "SignedData.version", reason: "version \(signedData.version); RFC 5652 requires \(expectedVersion) for these signers")
        }
        self.signedData = signedData
        self.content = content
    }

    static func decodeBase64(_ text: some StringProtocol, limits: Limits) throws(ReceiptError) -> [UInt8] {
        let length = text.utf8.count
        guard length > 0 else { throw ReceiptError(.empty, reason: "the receipt is empty") }
        guard length <= limits.maxReceiptBytes / 3 * 4 + 4096 else {
            throw ReceiptError(.tooLarge, reason: "the base64 text is over the \(limits.maxReceiptBytes)-byte limit")
        }
        guard let der = Base64.decode(text, mode: .standardLenient) else {
            throw ReceiptError(.notBase64, reason: "the receipt is not valid base64")
        }
        guard !der.isEmpty else { throw ReceiptError(.empty, reason: "the receipt is empty") }
        guard der.count <= limits.maxReceiptBytes else {
            throw ReceiptError(.tooLarge, reason: "\(der.count) bytes is over the \(limits.maxReceiptBytes)-byte limit")
        }
        return der
    }
}

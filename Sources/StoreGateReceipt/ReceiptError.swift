public import StoreGateCore

/// Why an app receipt was refused.
///
/// Shaped like swift-certificates' `CertificateError`: equal by ``code``, carrying the
/// ``step`` that failed, the ``field`` concerned (when there is one), a human ``reason`` and
/// where it was thrown. Tests and callers compare codes, never messages.
public struct ReceiptError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The machine-readable failure; ``description`` is a stable snake-case name.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        fileprivate enum Backing: Hashable, Sendable {
            case empty, tooLarge, notBase64
            case malformedPKCS7, notSignedData, unsupportedContentType, missingContent
            case noSigner, multipleSigners, signerNotFound, malformedCertificate
            case unsupportedAlgorithm, digestAlgorithmMismatch, unsupportedKey, signedAttributesInvalid, signatureInvalid
            case malformedPayload, missingField, duplicateField, invalidDate, tooManyPurchases
            case chain(ChainError.Code)
            case bundleIdMismatch, appVersionMismatch, deviceHashMismatch, receiptExpired
            case environmentNotAccepted, productNotFound, transactionNotFound
            case expectationNotMet
        }

        fileprivate let backing: Backing
        fileprivate init(_ backing: Backing) { self.backing = backing }

        /// The input is empty.
        public static let empty = Code(.empty)
        /// The input is over `Limits.maxReceiptBytes`.
        public static let tooLarge = Code(.tooLarge)
        /// The input is neither DER nor valid base64.
        public static let notBase64 = Code(.notBase64)
        /// The PKCS#7 structure cannot be decoded.
        public static let malformedPKCS7 = Code(.malformedPKCS7)
        /// The ContentInfo is not SignedData (1.2.840.113549.1.7.2).
        public static let notSignedData = Code(.notSignedData)
        /// The encapsulated content is not id-data (1.2.840.113549.1.7.1).
        public static let unsupportedContentType = Code(.unsupportedContentType)
        /// The SignedData is detached: it carries no receipt.
        public static let missingContent = Code(.missingContent)
        /// No SignerInfo.
        public static let noSigner = Code(.noSigner)
        /// More than one SignerInfo (Apple signs once; several signers would be ambiguous).
        public static let multipleSigners = Code(.multipleSigners)
        /// No embedded certificate matches the signer identifier.
        public static let signerNotFound = Code(.signerNotFound)
        /// An embedded certificate cannot be parsed.
        public static let malformedCertificate = Code(.malformedCertificate)
        /// A digest or signature algorithm other than SHA-1/SHA-256 with RSA PKCS#1 v1.5.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The signer's digest algorithm is not listed in `digestAlgorithms`, or disagrees with the signature algorithm.
        public static let digestAlgorithmMismatch = Code(.digestAlgorithmMismatch)
        /// The signer's key is not RSA.
        public static let unsupportedKey = Code(.unsupportedKey)
        /// Signed attributes are present but their message digest or content type is wrong.
        public static let signedAttributesInvalid = Code(.signedAttributesInvalid)
        /// The RSA signature does not verify over the content.
        public static let signatureInvalid = Code(.signatureInvalid)
        /// The receipt payload cannot be decoded (``ReceiptError/field`` says where).
        public static let malformedPayload = Code(.malformedPayload)
        /// A required receipt field is absent.
        public static let missingField = Code(.missingField)
        /// A single-valued receipt field appears twice.
        public static let duplicateField = Code(.duplicateField)
        /// A date field is not an RFC 3339 date.
        public static let invalidDate = Code(.invalidDate)
        /// More in-app entries than `Limits.maxInAppPurchases`.
        public static let tooManyPurchases = Code(.tooManyPurchases)
        /// The certificate chain failed; the Core chain code says how.
        public static func chain(_ code: ChainError.Code) -> Code { Code(.chain(code)) }
        /// The receipt is for another app.
        public static let bundleIdMismatch = Code(.bundleIdMismatch)
        /// The receipt names another app version.
        public static let appVersionMismatch = Code(.appVersionMismatch)
        /// The receipt was not issued for this device.
        public static let deviceHashMismatch = Code(.deviceHashMismatch)
        /// The receipt's expiration date (field 21) has passed.
        public static let receiptExpired = Code(.receiptExpired)
        /// The receipt's environment is not among the accepted ones.
        public static let environmentNotAccepted = Code(.environmentNotAccepted)
        /// The receipt does not contain the expected product.
        public static let productNotFound = Code(.productNotFound)
        /// The receipt does not contain the expected transaction.
        public static let transactionNotFound = Code(.transactionNotFound)
        /// A caller's own expectation (a ``ReceiptExpectation`` added to ``ReceiptExpectations``)
        /// does not hold; ``ReceiptError/field`` names it.
        public static let expectationNotMet = Code(.expectationNotMet)

        /// Every code, chain failures once per `ChainError.Code` (the HTTP API's error codes
        /// are built from it).
        public static let all: [Code] = [
            .empty, .tooLarge, .notBase64, .malformedPKCS7, .notSignedData, .unsupportedContentType, .missingContent, .noSigner,
            .multipleSigners, .signerNotFound, .malformedCertificate, .unsupportedAlgorithm, .digestAlgorithmMismatch, .unsupportedKey,
            .signedAttributesInvalid, .signatureInvalid, .malformedPayload, .missingField, .duplicateField, .invalidDate, .tooManyPurchases,
            .bundleIdMismatch, .appVersionMismatch, .deviceHashMismatch, .receiptExpired, .environmentNotAccepted, .productNotFound,
            .transactionNotFound, .expectationNotMet,
        ] + ChainError.Code.all.map(Code.chain)

        /// The chain code, when this is a chain failure.
        public var chainCode: ChainError.Code? {
            if case .chain(let code) = backing { return code }
            return nil
        }

        /// The step this code belongs to.
        public var step: VerificationStep {
            switch backing {
            case .empty, .tooLarge, .notBase64: return .input
            case .malformedPKCS7, .notSignedData, .unsupportedContentType, .missingContent: return .structure
            case .noSigner, .multipleSigners, .signerNotFound, .malformedCertificate: return .signer
            case .unsupportedAlgorithm, .digestAlgorithmMismatch, .unsupportedKey, .signedAttributesInvalid, .signatureInvalid:
                return .signature
            case .malformedPayload, .missingField, .duplicateField, .invalidDate, .tooManyPurchases: return .payload
            case .chain: return .chain
            case .bundleIdMismatch, .appVersionMismatch, .deviceHashMismatch, .receiptExpired,
                .environmentNotAccepted, .productNotFound, .transactionNotFound, .expectationNotMet:
                return .expectations
            }
        }

        public var description: String {
            switch backing {
            case .empty: return "empty"
            case .tooLarge: return "too_large"
            case .notBase64: return "not_base64"
            case .malformedPKCS7: return "malformed_pkcs7"
            case .notSignedData: return "not_signed_data"
            case .unsupportedContentType: return "unsupported_content_type"
            case .missingContent: return "missing_content"
            case .noSigner: return "no_signer"
            case .multipleSigners: return "multiple_signers"
            case .signerNotFound: return "signer_not_found"
            case .malformedCertificate: return "malformed_certificate"
            case .unsupportedAlgorithm: return "unsupported_algorithm"
            case .digestAlgorithmMismatch: return "digest_algorithm_mismatch"
            case .unsupportedKey: return "unsupported_key"
            case .signedAttributesInvalid: return "signed_attributes_invalid"
            case .signatureInvalid: return "signature_invalid"
            case .malformedPayload: return "malformed_payload"
            case .missingField: return "missing_field"
            case .duplicateField: return "duplicate_field"
            case .invalidDate: return "invalid_date"
            case .tooManyPurchases: return "too_many_purchases"
            case .chain(let code): return "chain_\(code)"
            case .bundleIdMismatch: return "bundle_id_mismatch"
            case .appVersionMismatch: return "app_version_mismatch"
            case .deviceHashMismatch: return "device_hash_mismatch"
            case .receiptExpired: return "receipt_expired"
            case .environmentNotAccepted: return "environment_not_accepted"
            case .productNotFound: return "product_not_found"
            case .transactionNotFound: return "transaction_not_found"
            case .expectationNotMet: return "expectation_not_met"
            }
        }
    }

    /// What failed.
    public let code: Code
    /// The field or structure element concerned, e.g. `bundle_id (2)` or `SignerInfo.signature`.
    public let field: String?
    /// A human-readable explanation; never contains the receipt.
    public let reason: String
    public let file: String
    public let line: UInt

    /// The step that failed.
    public var step: VerificationStep { code.step }

    public init(_ code: Code, field: String? = nil, reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.field = field
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// Wraps a chain failure.
    public init(_ chainError: ChainError, file: String = #fileID, line: UInt = #line) {
        self.init(.chain(chainError.code), reason: chainError.reason, file: file, line: line)
    }

    public static func == (lhs: ReceiptError, rhs: ReceiptError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        if let field {
            return "\(step): \(code) [\(field)]: \(reason)"
        }
        return "\(step): \(code): \(reason)"
    }
}

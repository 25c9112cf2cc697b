public import StoreGateCore

/// Why a StoreKit 2 signed payload (a compact JWS) was refused.
///
/// Shaped like swift-certificates' `CertificateError`: equal by ``code``; ``step`` (derived
/// from the code, as for receipts: each code belongs to exactly one step) names where
/// verification stopped, ``field`` the JSON member or JWS part at fault, ``reason`` explains it
/// to people and is never compared. Chain failures keep the `ChainError.Code` of
/// `CertificateChainVerifier` inside ``Code/chain(_:)``; on the wire they are spelled
/// `chain_<code>`, as receipts spell them.
public struct SignedDataError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The machine-readable failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: Hashable, Sendable {
            case empty
            case tooLarge
            case malformedCompactSerialization
            case invalidBase64URL
            case malformedHeader
            case unsupportedAlgorithm
            case unsupportedHeaderParameter
            case missingCertificates
            case wrongCertificateCount
            case malformedJSON
            case missingField
            case invalidField
            case chain(ChainError.Code)
            case malformedSignature
            case unsupportedKey
            case signatureInvalid
            case bundleIdMismatch
            case environmentNotAccepted
            case appAppleIdMismatch
            case appAppleIdRequired
            case signedDateMissing
            case signedDateTooOld
            case nestedMismatch
            case productMismatch
            case transactionMismatch
            case renewalInfoMismatch
            case expectationNotMet
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The input is empty.
        public static let empty = Code(.empty)
        /// The input is larger than `Limits.maxJWSBytes`.
        public static let tooLarge = Code(.tooLarge)
        /// The input is not three dot-separated parts.
        public static let malformedCompactSerialization = Code(.malformedCompactSerialization)
        /// A part is not strict, unpadded base64url.
        public static let invalidBase64URL = Code(.invalidBase64URL)
        /// The protected header is not a JSON object with the members JWS requires.
        public static let malformedHeader = Code(.malformedHeader)
        /// The header's `alg` is not `ES256` (`none`, `HS256`, `RS256`, … are refused).
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// The header carries a parameter StoreGate refuses to honour (`crit`, `jku`, `jwk`, `x5u`).
        public static let unsupportedHeaderParameter = Code(.unsupportedHeaderParameter)
        /// The header has no `x5c` certificate chain.
        public static let missingCertificates = Code(.missingCertificates)
        /// `x5c` holds neither Apple's three certificates nor a lone opt-in anchor.
        public static let wrongCertificateCount = Code(.wrongCertificateCount)
        /// The payload is not a JSON object.
        public static let malformedJSON = Code(.malformedJSON)
        /// A member the verification needs is absent.
        public static let missingField = Code(.missingField)
        /// A member has the wrong JSON type or an impossible value.
        public static let invalidField = Code(.invalidField)
        /// The certificate chain failed; the chain verifier's code says why.
        public static func chain(_ code: ChainError.Code) -> Code { Code(.chain(code)) }
        /// The signature is not a raw 64-byte ECDSA P-256 `r‖s` (for example DER-encoded).
        public static let malformedSignature = Code(.malformedSignature)
        /// The leaf certificate's key is not a P-256 key.
        public static let unsupportedKey = Code(.unsupportedKey)
        /// The ES256 signature does not verify over `header.payload` with the leaf's key.
        public static let signatureInvalid = Code(.signatureInvalid)
        /// The payload's `bundleId` is not the expected one.
        public static let bundleIdMismatch = Code(.bundleIdMismatch)
        /// The (reported) environment is not among the accepted ones, or is absent.
        public static let environmentNotAccepted = Code(.environmentNotAccepted)
        /// The payload's `appAppleId` is not the expected one.
        public static let appAppleIdMismatch = Code(.appAppleIdMismatch)
        /// A production proof that carries an `appAppleId` needs one in the expectations.
        public static let appAppleIdRequired = Code(.appAppleIdRequired)
        /// A maximum age was asked for but the payload has no `signedDate`.
        public static let signedDateMissing = Code(.signedDateMissing)
        /// `signedDate` is older than the expectations' maximum age.
        public static let signedDateTooOld = Code(.signedDateTooOld)
        /// A notification's nested signed data disagrees with the notification (bundle id, environment).
        public static let nestedMismatch = Code(.nestedMismatch)
        /// The proof is not for the expected product.
        public static let productMismatch = Code(.productMismatch)
        /// The proof is not the expected transaction.
        public static let transactionMismatch = Code(.transactionMismatch)
        /// A renewal info sent with a transaction is for another subscription or environment.
        public static let renewalInfoMismatch = Code(.renewalInfoMismatch)
        /// A caller's own expectation (a ``SignedDataExpectation`` added to
        /// ``SignedDataExpectations``) does not hold; ``SignedDataError/field`` names it.
        public static let expectationNotMet = Code(.expectationNotMet)

        /// Every code, chain failures once per `ChainError.Code` (the HTTP API's error codes
        /// are built from it).
        public static let all: [Code] = [
            .empty, .tooLarge, .malformedCompactSerialization, .invalidBase64URL, .malformedHeader, .unsupportedAlgorithm,
            .unsupportedHeaderParameter, .missingCertificates, .wrongCertificateCount, .malformedJSON, .missingField, .invalidField,
            .malformedSignature, .unsupportedKey, .signatureInvalid, .bundleIdMismatch, .environmentNotAccepted, .appAppleIdMismatch,
            .appAppleIdRequired, .signedDateMissing, .signedDateTooOld, .nestedMismatch, .productMismatch, .transactionMismatch,
            .renewalInfoMismatch, .expectationNotMet,
        ] + ChainError.Code.all.map(Code.chain)

        /// The chain verifier's code, when this is a chain failure.
        public var chainCode: ChainError.Code? {
            if case .chain(let code) = backing { return code }
            return nil
        }

        /// The step this failure belongs to.
        public var step: VerificationStep {
            switch backing {
            case .empty, .tooLarge:
                return .input
            case .malformedCompactSerialization, .invalidBase64URL, .malformedHeader, .unsupportedAlgorithm,
                 .unsupportedHeaderParameter, .missingCertificates, .wrongCertificateCount:
                return .structure
            case .malformedSignature, .unsupportedKey, .signatureInvalid:
                return .signature
            case .malformedJSON, .missingField, .invalidField:
                return .payload
            case .chain:
                return .chain
            case .bundleIdMismatch, .environmentNotAccepted, .appAppleIdMismatch, .appAppleIdRequired, .signedDateMissing,
                 .signedDateTooOld, .nestedMismatch, .productMismatch, .transactionMismatch, .renewalInfoMismatch,
                 .expectationNotMet:
                return .expectations
            }
        }

        /// A stable snake-case name, used in reports and HTTP error bodies
        /// (`chain_not_valid_at_signing_time` for chain failures, as for receipts).
        public var description: String {
            switch backing {
            case .empty: return "empty"
            case .tooLarge: return "too_large"
            case .malformedCompactSerialization: return "malformed_compact_serialization"
            case .invalidBase64URL: return "invalid_base64url"
            case .malformedHeader: return "malformed_header"
            case .unsupportedAlgorithm: return "unsupported_algorithm"
            case .unsupportedHeaderParameter: return "unsupported_header_parameter"
            case .missingCertificates: return "missing_certificates"
            case .wrongCertificateCount: return "wrong_certificate_count"
            case .malformedJSON: return "malformed_json"
            case .missingField: return "missing_field"
            case .invalidField: return "invalid_field"
            case .chain(let code): return "chain_\(code)"
            case .malformedSignature: return "malformed_signature"
            case .unsupportedKey: return "unsupported_key"
            case .signatureInvalid: return "signature_invalid"
            case .bundleIdMismatch: return "bundle_id_mismatch"
            case .environmentNotAccepted: return "environment_not_accepted"
            case .appAppleIdMismatch: return "app_apple_id_mismatch"
            case .appAppleIdRequired: return "app_apple_id_required"
            case .signedDateMissing: return "signed_date_missing"
            case .signedDateTooOld: return "signed_date_too_old"
            case .nestedMismatch: return "nested_mismatch"
            case .productMismatch: return "product_mismatch"
            case .transactionMismatch: return "transaction_mismatch"
            case .renewalInfoMismatch: return "renewal_info_mismatch"
            case .expectationNotMet: return "expectation_not_met"
            }
        }
    }

    /// The verification step that failed (the code's).
    public var step: VerificationStep { code.step }
    /// What failed.
    public let code: Code
    /// The JWS part or JSON member at fault (`header.alg`, `signedDate`,
    /// `data.signedTransactionInfo`), when there is one.
    public let field: String?
    /// A human-readable explanation; never contains the proof itself.
    public let reason: String
    /// Where the error was thrown (`#fileID`).
    public let file: String
    /// The line it was thrown at.
    public let line: UInt

    /// Creates an error.
    public init(
        _ code: Code,
        field: String? = nil,
        reason: String,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.field = field
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// Wraps a chain failure into the `chain` step.
    public init(chain error: ChainError, field: String? = nil, file: String = #fileID, line: UInt = #line) {
        self.init(.chain(error.code), field: field, reason: error.reason, file: file, line: line)
    }

    /// The same error found inside a notification's nested signed data: the field gains the
    /// nested member's name as a prefix.
    func nested(in member: String) -> SignedDataError {
        SignedDataError(code, field: field.map { "\(member).\($0)" } ?? member, reason: reason, file: file, line: line)
    }

    /// Errors are equal when their codes are: tests compare codes, never messages.
    public static func == (lhs: SignedDataError, rhs: SignedDataError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code only, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    /// `step: code (field): reason`.
    public var description: String {
        if let field {
            return "\(step): \(code) (\(field)): \(reason)"
        }
        return "\(step): \(code): \(reason)"
    }
}

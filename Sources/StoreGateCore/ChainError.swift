/// Why a certificate chain was refused.
///
/// Shaped like swift-certificates' `CertificateError`: equal by ``code``; ``reason`` is for
/// people and never compared. Receipt and JWS errors carry this code in their `chain` step.
public struct ChainError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The machine-readable failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case noCertificates = "no_certificates"
            case malformedCertificate = "malformed_certificate"
            case untrustedRoot = "untrusted_root"
            case notPinned = "not_pinned"
            case leafMarkerMissing = "leaf_marker_missing"
            case intermediateMarkerMissing = "intermediate_marker_missing"
            case notValidAtSigningTime = "not_valid_at_signing_time"
            case wrongOrder = "wrong_order"
            case wrongLength = "wrong_length"
            case unsupportedKey = "unsupported_key"
            case invalidChain = "invalid_chain"
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The proof carries no certificates.
        public static let noCertificates = Code(.noCertificates)
        /// A certificate could not be parsed.
        public static let malformedCertificate = Code(.malformedCertificate)
        /// No path ends in a pinned Apple root or an enabled opt-in anchor.
        public static let untrustedRoot = Code(.untrustedRoot)
        /// A certificate offered as an Apple root does not match a pin.
        public static let notPinned = Code(.notPinned)
        /// The leaf lacks Apple's receipt-signing marker OID 1.2.840.113635.100.6.11.1.
        public static let leafMarkerMissing = Code(.leafMarkerMissing)
        /// The intermediate lacks Apple's WWDR marker OID 1.2.840.113635.100.6.2.1.
        public static let intermediateMarkerMissing = Code(.intermediateMarkerMissing)
        /// A certificate was not valid when the proof was signed.
        public static let notValidAtSigningTime = Code(.notValidAtSigningTime)
        /// The certificates are not in leaf → intermediate → root order.
        public static let wrongOrder = Code(.wrongOrder)
        /// The chain does not have the length Apple's chains have.
        public static let wrongLength = Code(.wrongLength)
        /// The signing key is not of the kind the proof format requires.
        public static let unsupportedKey = Code(.unsupportedKey)
        /// The chain failed validation for another reason (a bad certificate signature, constraints).
        public static let invalidChain = Code(.invalidChain)

        /// A stable snake-case name, used in reports and HTTP error bodies.
        public var description: String { backing.rawValue }

        /// Every code, for vocabularies built on this one (the HTTP API's error codes).
        public static let all: [Code] = [
            .noCertificates, .malformedCertificate, .untrustedRoot, .notPinned, .leafMarkerMissing, .intermediateMarkerMissing,
            .notValidAtSigningTime, .wrongOrder, .wrongLength, .unsupportedKey, .invalidChain,
        ]
    }

    /// What failed.
    public let code: Code
    /// A human-readable explanation; never contains whole certificates.
    public let reason: String
    public let file: String
    public let line: UInt

    public init(_ code: Code, reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    public static func == (lhs: ChainError, rhs: ChainError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "chain: \(code): \(reason)" }
}

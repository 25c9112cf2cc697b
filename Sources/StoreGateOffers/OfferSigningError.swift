/// Why an offer could not be signed.
///
/// Shaped like the other modules' errors: equal by ``code``; ``reason`` is for people and
/// never compared, and never holds key material.
public struct OfferSigningError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The machine-readable failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case invalidKey = "invalid_key"
            case missingKey = "missing_key"
            case invalidRequest = "invalid_request"
            case ineligible = "ineligible"
            case eligibilityUnavailable = "eligibility_unavailable"
            case signingFailed = "signing_failed"
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The key is not a P-256 private key in PEM (a `.p8` file), or a value naming it is empty.
        public static let invalidKey = Code(.invalidKey)
        /// No key is configured (neither a file nor the environment names one).
        public static let missingKey = Code(.missingKey)
        /// A parameter breaks Apple's rules (empty, too long, not a JSON object).
        public static let invalidRequest = Code(.invalidRequest)
        /// The eligibility rule refused the customer (``OfferSigningError/reason`` says why).
        public static let ineligible = Code(.ineligible)
        /// The eligibility rule failed (a database unavailable); nothing was signed. Retryable.
        public static let eligibilityUnavailable = Code(.eligibilityUnavailable)
        /// The signature could not be made.
        public static let signingFailed = Code(.signingFailed)

        /// A stable snake-case name, used in reports and HTTP error bodies.
        public var description: String { backing.rawValue }
    }

    /// What failed.
    public let code: Code
    /// The parameter at fault, in Apple's spelling (`productId`), when one is.
    public let field: String?
    /// A human-readable explanation; never contains key material.
    public let reason: String
    /// The source file that threw.
    public let file: String
    /// The line that threw.
    public let line: UInt

    /// Creates a value from its parts.
    public init(_ code: Code, field: String? = nil, reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.field = field
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// Whether the same request may succeed later (only when the eligibility rule failed).
    public var isRetryable: Bool { code == .eligibilityUnavailable }

    public static func == (lhs: OfferSigningError, rhs: OfferSigningError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        "offers: \(code)" + (field.map { " (\($0))" } ?? "") + ": \(reason)"
    }
}

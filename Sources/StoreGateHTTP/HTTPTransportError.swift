/// Why one HTTP attempt got no answer: the failures of an ``HTTPTransport``.
///
/// Shaped like AsyncHTTPClient's `HTTPClientError` and swift-certificates' `CertificateError`:
/// equal by ``code``; ``reason`` is for people and never compared. An answer with any HTTP
/// status is not an error here: what a status means belongs to the caller (the App Store
/// clients turn them into `AppStoreClientError`s, the webhook deliverer into retries).
public struct HTTPTransportError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The machine-readable failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case invalidRequest = "invalid_request"
            case connectionFailed = "connection_failed"
            case tlsFailure = "tls_failure"
            case timedOut = "timed_out"
            case responseTooLarge = "response_too_large"
            case cancelled = "cancelled"
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The request cannot be sent (its URL has no usable scheme or host).
        public static let invalidRequest = Code(.invalidRequest)
        /// No connection could be made, or it broke before the whole answer arrived.
        public static let connectionFailed = Code(.connectionFailed)
        /// The TLS handshake failed: the server's certificate is not trusted, expired, or for
        /// another host. Never bypassed.
        public static let tlsFailure = Code(.tlsFailure)
        /// The attempt's deadline passed before the whole answer arrived.
        public static let timedOut = Code(.timedOut)
        /// The answer's body is larger than the configured limit.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The calling task was cancelled, or the transport is shut down.
        public static let cancelled = Code(.cancelled)

        /// A stable snake-case name, used in reports, logs and stored delivery errors.
        public var description: String { backing.rawValue }
    }

    /// What failed.
    public let code: Code
    /// A human-readable explanation; never contains request bodies, tokens or secrets.
    public let reason: String
    /// The source file that threw.
    public let file: String
    /// The line that threw.
    public let line: UInt

    /// Creates a value from its parts.
    public init(_ code: Code, reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.file = file
        self.line = line
    }

    /// Whether the same request may get an answer if sent again: a connection that failed
    /// and an attempt that timed out. TLS failures, requests that cannot be sent, answers
    /// too large and cancellation are not.
    public var isRetryable: Bool {
        code == .connectionFailed || code == .timedOut
    }

    public static func == (lhs: HTTPTransportError, rhs: HTTPTransportError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String { "http: \(code): \(reason)" }
}

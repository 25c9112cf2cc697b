public import Foundation
public import StoreGateCore

/// Why a call to Apple, or the check of Apple's answer, failed.
///
/// Shaped like swift-certificates' `CertificateError`: equal by ``code``; ``reason`` is for
/// people and never compared. The optional fields carry what Apple said (a verifyReceipt
/// ``status``, a Server API ``apiError``, the ``httpStatus``) so callers can branch on data,
/// never on message strings. ``isRetryable`` is a property, not a guess from text.
public struct AppStoreClientError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The machine-readable failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case invalidConfiguration = "invalid_configuration"
            case invalidRequest = "invalid_request"
            case connectionFailed = "connection_failed"
            case tlsFailure = "tls_failure"
            case timedOut = "timed_out"
            case deadlineExceeded = "deadline_exceeded"
            case cancelled = "cancelled"
            case responseTooLarge = "response_too_large"
            case httpStatus = "http_status"
            case rateLimited = "rate_limited"
            case unauthorized = "unauthorized"
            case apiError = "api_error"
            case malformedReply = "malformed_reply"
            case routingLoop = "routing_loop"
            case replyStatus = "reply_status"
            case missingReceipt = "missing_receipt"
            case bundleIdMismatch = "bundle_id_mismatch"
            case environmentNotAllowed = "environment_not_allowed"
            case environmentMismatch = "environment_mismatch"
            case transactionNotFound = "transaction_not_found"
            case productIdMismatch = "product_id_mismatch"
            case quantityMismatch = "quantity_mismatch"
            case offlineDisagreement = "offline_disagreement"
            case signedPayloadRejected = "signed_payload_rejected"
            case pagingLimitExceeded = "paging_limit_exceeded"
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The client was configured with values it cannot use (a bad URL, a bad key).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The request could not be built (empty receipt, bad identifier).
        public static let invalidRequest = Code(.invalidRequest)
        /// No connection could be made, or it broke before an answer arrived. Retryable.
        public static let connectionFailed = Code(.connectionFailed)
        /// The TLS handshake failed: the server's certificate is not trusted, expired, or for
        /// another host. Never retried and never bypassed.
        public static let tlsFailure = Code(.tlsFailure)
        /// One attempt took longer than its timeout. Retryable.
        public static let timedOut = Code(.timedOut)
        /// The call's total deadline passed (including retries and their waits).
        public static let deadlineExceeded = Code(.deadlineExceeded)
        /// The calling task was cancelled.
        public static let cancelled = Code(.cancelled)
        /// The answer is larger than the configured limit.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// An unexpected HTTP status (see ``AppStoreClientError/httpStatus``); 5xx is retryable.
        public static let httpStatus = Code(.httpStatus)
        /// HTTP 429: too many requests; ``AppStoreClientError/retryAfter`` says when to come back.
        public static let rateLimited = Code(.rateLimited)
        /// HTTP 401: Apple refused the Server API token.
        public static let unauthorized = Code(.unauthorized)
        /// The Server API answered with an error code (see ``AppStoreClientError/apiError``).
        public static let apiError = Code(.apiError)
        /// The answer is not the JSON Apple documents.
        public static let malformedReply = Code(.malformedReply)
        /// verifyReceipt sent the request back and forth between production and sandbox.
        public static let routingLoop = Code(.routingLoop)
        /// verifyReceipt answered a status other than 0 (see ``AppStoreClientError/status``).
        public static let replyStatus = Code(.replyStatus)
        /// A "valid" verifyReceipt reply carries no receipt at all.
        public static let missingReceipt = Code(.missingReceipt)
        /// The reply (or a signed payload) is for another app.
        public static let bundleIdMismatch = Code(.bundleIdMismatch)
        /// The reply's environment is not one the caller accepts.
        public static let environmentNotAllowed = Code(.environmentNotAllowed)
        /// The reply names another environment than the endpoint that answered it.
        public static let environmentMismatch = Code(.environmentMismatch)
        /// The reply does not contain the transaction being verified.
        public static let transactionNotFound = Code(.transactionNotFound)
        /// The transaction in the reply is for another product.
        public static let productIdMismatch = Code(.productIdMismatch)
        /// The transaction in the reply has another quantity.
        public static let quantityMismatch = Code(.quantityMismatch)
        /// The offline verification of the receipt and Apple's reply disagree.
        public static let offlineDisagreement = Code(.offlineDisagreement)
        /// A signed payload in a Server API answer failed JWS verification.
        public static let signedPayloadRejected = Code(.signedPayloadRejected)
        /// Following `hasMore` did not end within the configured number of pages.
        public static let pagingLimitExceeded = Code(.pagingLimitExceeded)

        /// A stable snake-case name, used in reports and HTTP error bodies.
        public var description: String { backing.rawValue }
    }

    /// What failed.
    public let code: Code
    /// A human-readable explanation; never contains receipts, tokens or secrets.
    public let reason: String
    /// The verifyReceipt status Apple answered, when the failure is about one.
    public var status: VerifyReceiptStatus?
    /// The App Store Server API error code, when Apple sent one.
    public var apiError: AppStoreAPIErrorCode?
    /// The HTTP status of the answer, when there was one.
    public var httpStatus: Int?
    /// When Apple allows the next request (HTTP 429 `Retry-After`).
    public var retryAfter: Date?
    /// The environment whose endpoint produced the failure, when known.
    public var environment: AppStoreEnvironment?
    /// How many attempts were made before giving up (1 when no retry happened).
    public var attempts: Int
    /// The source file that threw.
    public let file: String
    /// The line that threw.
    public let line: UInt

    /// Creates a value from its parts.
    public init(
        _ code: Code,
        reason: String,
        status: VerifyReceiptStatus? = nil,
        apiError: AppStoreAPIErrorCode? = nil,
        httpStatus: Int? = nil,
        retryAfter: Date? = nil,
        environment: AppStoreEnvironment? = nil,
        attempts: Int = 1,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.status = status
        self.apiError = apiError
        self.httpStatus = httpStatus
        self.retryAfter = retryAfter
        self.environment = environment
        self.attempts = attempts
        self.file = file
        self.line = line
    }

    /// Whether sending the same request again may succeed. Exactly these are retried:
    ///
    /// - no answer: ``Code/connectionFailed`` and ``Code/timedOut`` (one attempt's timeout);
    /// - HTTP 429 (``Code/rateLimited``), after its `Retry-After` time;
    /// - an Apple error body whose code Apple documents as retryable (4040002, 4040004,
    ///   4040006, 4290000, 5000001; ``AppStoreAPIErrorCode/isRetryable``), whatever the status;
    /// - HTTP 5xx without an Apple error code, or with a code Apple does not document;
    /// - verifyReceipt's temporary statuses (21005, 21009, 21100–21199).
    ///
    /// Not retried: HTTP 5xx carrying a documented code that is not retryable (5000000
    /// `GeneralInternalError`: Apple separates it from 5000001 `GeneralInternalRetryableError`,
    /// and says to try the latter again only), every other 4xx and error code, 401, TLS
    /// failures, mismatches, malformed answers and payloads that fail verification.
    public var isRetryable: Bool {
        switch code {
        case .connectionFailed, .timedOut, .rateLimited:
            return true
        case .httpStatus:
            return (httpStatus ?? 0) >= 500
        case .replyStatus:
            return status?.isRetryable ?? false
        case .apiError:
            if let apiError, apiError.isDocumented { return apiError.isRetryable }
            return (httpStatus ?? 0) >= 500
        default:
            return false
        }
    }

    public static func == (lhs: AppStoreClientError, rhs: AppStoreClientError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        var text = "appstore: \(code): \(reason)"
        if let status { text += " (status \(status.rawValue))" }
        if let apiError { text += " (errorCode \(apiError.rawValue))" }
        if let httpStatus, !reason.hasPrefix("HTTP") { text += " (HTTP \(httpStatus))" }
        if attempts > 1 { text += " after \(attempts) attempts" }
        return text
    }

    /// A copy with the attempt count set.
    func with(attempts: Int) -> AppStoreClientError {
        var copy = self
        copy.attempts = attempts
        return copy
    }

    /// A copy with the environment set, when it is not already.
    func with(environment: AppStoreEnvironment) -> AppStoreClientError {
        var copy = self
        if copy.environment == nil { copy.environment = environment }
        return copy
    }
}

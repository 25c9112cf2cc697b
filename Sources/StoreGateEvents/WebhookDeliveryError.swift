public import StoreGateHTTP

/// Why a webhook request got no answer from its receiver: the deliverer's own failure type,
/// for a delivery attempt or a test event (an answer with any HTTP status is not one; the
/// deliverer retries or holds on those).
///
/// Shaped like the other StoreGate errors: equal by ``code``; ``reason`` is for people and
/// never compared. The codes are the transport's (``HTTPTransportError/Code``: the receiver
/// unreachable, its TLS refused, no answer in ``WebhookDeliveryPolicy/attemptTimeout``, an
/// answer too large, the deliverer shut down); this type adds the endpoint they are about.
/// ``description`` (`code: reason`) is what a failed delivery records as its error, what
/// `GET /v1/webhooks/deliveries` shows and what a test event reports.
public struct WebhookDeliveryError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed: the transport's code.
    public typealias Code = HTTPTransportError.Code

    /// What failed.
    public let code: Code
    /// A human-readable explanation; never contains the event, a signature or a secret.
    public let reason: String
    /// The name of the endpoint the request was for.
    public let endpoint: String
    /// The source file that threw (the transport's, for a transport failure).
    public let file: String
    /// The line that threw.
    public let line: UInt

    /// Creates a value from its parts.
    public init(_ code: Code, reason: String, endpoint: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.reason = reason
        self.endpoint = endpoint
        self.file = file
        self.line = line
    }

    /// The deliverer's view of a transport failure on a request to `endpoint`.
    public init(_ transport: HTTPTransportError, endpoint: String) {
        self.init(transport.code, reason: transport.reason, endpoint: endpoint, file: transport.file, line: transport.line)
    }

    /// Equal by code.
    public static func == (lhs: WebhookDeliveryError, rhs: WebhookDeliveryError) -> Bool { lhs.code == rhs.code }
    /// Hashes the code.
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
    /// `code: reason`.
    public var description: String { "\(code): \(reason)" }
}

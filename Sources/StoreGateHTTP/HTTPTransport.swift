/// Sends one HTTP request and returns the whole answer: the I/O that StoreGate's Apple
/// clients inject.
///
/// ``AsyncHTTPClientTransport`` is the production implementation (strict TLS on the system
/// trust store). Retries, backoff and the total deadline of a call live above the transport,
/// in the clients, so a transport makes exactly one attempt per ``send(_:deadline:)``.
public protocol HTTPTransport: Sendable {
    /// Sends `request` once.
    ///
    /// - Parameters:
    ///   - request: What to send.
    ///   - deadline: When this attempt must have its whole answer; past it the transport
    ///     gives up with ``AppStoreClientError/Code/timedOut``.
    /// - Returns: The answer, whatever its HTTP status.
    /// - Throws: ``AppStoreClientError`` with ``AppStoreClientError/Code/connectionFailed``,
    ///   ``AppStoreClientError/Code/tlsFailure``, ``AppStoreClientError/Code/timedOut``,
    ///   ``AppStoreClientError/Code/responseTooLarge`` or ``AppStoreClientError/Code/cancelled``.
    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(AppStoreClientError) -> TransportResponse
}

/// One HTTP request, as StoreGate's clients build it.
public struct TransportRequest: Sendable, Hashable {
    /// The HTTP method, upper case (`GET`, `POST`).
    public var method: String
    /// The absolute URL.
    public var url: String
    /// Header fields in order; names are case-insensitive.
    public var headers: [Header]
    /// The body, if any.
    public var body: [UInt8]?

    /// One header field.
    public struct Header: Sendable, Hashable {
        /// The field name.
        public var name: String
        /// The field value.
        public var value: String

        /// Creates a value from its parts.
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Creates a value from its parts.
    public init(method: String, url: String, headers: [Header] = [], body: [UInt8]? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}

/// One HTTP answer, with its body read in full.
public struct TransportResponse: Sendable, Hashable {
    /// The HTTP status code.
    public var status: Int
    /// Header fields in order.
    public var headers: [TransportRequest.Header]
    /// The whole body.
    public var body: [UInt8]

    /// Creates a value from its parts.
    public init(status: Int, headers: [TransportRequest.Header] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first value of the header named `name` (case-insensitive), if present.
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}

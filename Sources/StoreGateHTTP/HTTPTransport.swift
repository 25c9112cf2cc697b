/// Sends one HTTP request and returns the whole answer: the I/O that StoreGate's Apple
/// clients and its webhook deliverer inject.
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
    ///     gives up with ``HTTPTransportError/Code/timedOut``.
    /// - Returns: The answer, whatever its HTTP status.
    /// - Throws: ``HTTPTransportError`` with ``HTTPTransportError/Code/invalidRequest``,
    ///   ``HTTPTransportError/Code/connectionFailed``, ``HTTPTransportError/Code/tlsFailure``,
    ///   ``HTTPTransportError/Code/timedOut``, ``HTTPTransportError/Code/responseTooLarge`` or
    ///   ``HTTPTransportError/Code/cancelled``. What a failure means to the caller (an
    ///   `AppStoreClientError`, a failed webhook delivery) is the caller's to say.
    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse
}

public import StoreGateCore
public import StoreGateHTTP

extension AppStoreClientError {
    /// The App Store clients' view of a transport failure: the same code, under the same
    /// snake-case name the clients have always reported (``Code/connectionFailed``,
    /// ``Code/tlsFailure``, ``Code/timedOut``, ``Code/responseTooLarge``, ``Code/cancelled``,
    /// ``Code/invalidRequest``), its reason, and the place the transport threw.
    public init(_ transport: HTTPTransportError, environment: AppStoreEnvironment? = nil) {
        let code: Code
        switch transport.code {
        case .invalidRequest: code = .invalidRequest
        case .tlsFailure: code = .tlsFailure
        case .timedOut: code = .timedOut
        case .responseTooLarge: code = .responseTooLarge
        case .cancelled: code = .cancelled
        default: code = .connectionFailed
        }
        self.init(code, reason: transport.reason, environment: environment, file: transport.file, line: transport.line)
    }
}

extension HTTPTransport {
    /// Sends `request` once, a transport failure reported as an ``AppStoreClientError``.
    func sendToApple(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(AppStoreClientError) -> TransportResponse {
        do {
            return try await send(request, deadline: deadline)
        } catch {
            throw AppStoreClientError(error)
        }
    }
}

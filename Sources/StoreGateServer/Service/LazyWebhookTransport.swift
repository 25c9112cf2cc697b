import Logging
import StoreGateHTTP
import Synchronization

/// The webhooks' HTTP transport, created on the first request: every application has a
/// deliverer (endpoints can be added live), but one built and never run — or whose start-up
/// failed — must not leave an HTTP client that was never shut down.
final class LazyWebhookTransport: HTTPTransport {
    private let configuration: AsyncHTTPClientTransport.Configuration
    private let logger: Logger
    private let state = Mutex<(transport: AsyncHTTPClientTransport?, isShutDown: Bool)>((nil, false))

    init(configuration: AsyncHTTPClientTransport.Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
    }

    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse {
        let transport = state.withLock { state -> AsyncHTTPClientTransport? in
            guard !state.isShutDown else { return nil }
            if let existing = state.transport { return existing }
            let created = AsyncHTTPClientTransport(configuration: configuration, logger: logger)
            state.transport = created
            return created
        }
        guard let transport else {
            throw HTTPTransportError(.cancelled, reason: "the webhook transport is shut down")
        }
        return try await transport.send(request, deadline: deadline)
    }

    /// Shuts the transport down if it was created; later sends are refused.
    func shutdown() async throws {
        let transport = state.withLock { state -> AsyncHTTPClientTransport? in
            state.isShutDown = true
            return state.transport
        }
        try await transport?.shutdown()
    }
}

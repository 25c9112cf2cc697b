import Logging
import ServiceLifecycle
import StoreGateAppStoreClient
import StoreGateEvents
import StoreGateLedger

/// Runs the webhook deliveries in the application's service group, and closes their HTTP
/// client when they stop. Added after ``LedgerService``, so it stops before the ledger closes.
struct WebhookRunner: Service {
    let service: WebhookDeliveryService
    let transport: AsyncHTTPClientTransport

    /// The runner for the configured endpoints; `nil` when there are none, or when the ledger
    /// keeps no deliveries.
    init?(configuration: ServerConfiguration, ledger: any Ledger, logger: Logger) {
        guard !configuration.webhooks.isEmpty, let store = ledger as? any EventDeliveryStore else { return nil }
        var transportConfiguration = AsyncHTTPClientTransport.Configuration()
        transportConfiguration.readTimeout = configuration.webhookPolicy.attemptTimeout
        transport = AsyncHTTPClientTransport(configuration: transportConfiguration, logger: logger)
        service = WebhookDeliveryService(
            store: store, endpoints: configuration.webhooks, transport: transport, policy: configuration.webhookPolicy, logger: logger
        )
    }

    func run() async throws {
        try await service.run()
        try await transport.shutdown()
    }
}

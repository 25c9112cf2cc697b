import Logging
import ServiceLifecycle
import StoreGateAppStoreClient
import StoreGateEvents
import StoreGateLedger
import StoreGateWorkers

/// Runs the webhook deliveries in the application's service group, and closes their HTTP
/// client when they stop. Added after ``LedgerService``, so it stops before the ledger closes.
struct WebhookRunner: Service {
    let service: WebhookDeliveryService
    let transport: AsyncHTTPClientTransport
    let workers: WorkerGroup

    /// The runner for the configured endpoints (their workers wait at `gate`); `nil` when
    /// there are none.
    init?(configuration: ServerConfiguration, ledger: any Ledger, gate: StartGate, registry: WorkerRegistry, metrics: ServerMetrics, logger: Logger) {
        guard !configuration.webhooks.isEmpty else { return nil }
        var transportConfiguration = AsyncHTTPClientTransport.Configuration()
        transportConfiguration.readTimeout = configuration.webhookPolicy.attemptTimeout
        transport = AsyncHTTPClientTransport(configuration: transportConfiguration, logger: logger)
        service = WebhookDeliveryService(
            store: ledger, endpoints: configuration.webhooks, transport: transport, policy: configuration.webhookPolicy, logger: logger,
            metrics: metrics.instrumentFactory
        )
        workers = WorkerGroup(service.workers, gate: gate, registry: registry, logger: logger, metrics: metrics.instrumentFactory)
    }

    func run() async throws {
        try await workers.run()
        try await transport.shutdown()
    }
}

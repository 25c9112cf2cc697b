import Logging
import ServiceLifecycle
import StoreGateEvents
import StoreGateHTTP
import StoreGateLedger
import StoreGateWorkers

/// Runs the webhook deliveries in the application's service group, and closes their HTTP
/// client when they stop. Added after ``LedgerService``, so it stops before the ledger closes.
///
/// The endpoints are the ledger's (``WebhookEndpointStore``), followed live: the configured
/// ones (`STOREGATE_WEBHOOKS_FILE`) are seeded into the ledger at start-up.
struct WebhookRunner: Service {
    let service: WebhookDeliveryService
    let transport: LazyWebhookTransport
    let workers: WorkerGroup

    /// The runner (its workers wait at `gate`).
    init(configuration: ServerConfiguration, ledger: any Ledger, gate: StartGate, registry: WorkerRegistry, metrics: ServerMetrics, logger: Logger) {
        var transportConfiguration = AsyncHTTPClientTransport.Configuration()
        transportConfiguration.readTimeout = configuration.webhookPolicy.attemptTimeout
        transport = LazyWebhookTransport(configuration: transportConfiguration, logger: logger)
        service = WebhookDeliveryService(
            store: ledger, source: .ledger(ledger), transport: transport, policy: configuration.webhookPolicy,
            addressPolicy: configuration.webhookAddressPolicy, logger: logger, metrics: metrics.instrumentFactory, registry: registry
        )
        workers = WorkerGroup(service.workers, gate: gate, registry: registry, logger: logger, metrics: metrics.instrumentFactory)
    }

    func run() async throws {
        try await workers.run()
        try await transport.shutdown()
    }
}

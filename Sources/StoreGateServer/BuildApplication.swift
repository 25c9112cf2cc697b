public import Foundation
import HTTPTypes
public import Hummingbird
public import Logging
import NIOCore
import ServiceLifecycle
import StoreGateEvents
public import StoreGateLedger
import UnixSignals

/// The StoreGate HTTP application type ``buildApplication(configuration:ledger:metrics:now:logger:onServerRunning:)`` returns.
public typealias StoreGateApplication = Application<RouterResponder<StoreGateRequestContext>>

/// Assembles the StoreGate service around an open ledger: the router with every endpoint, the
/// middleware (metrics, errors, API keys) and the ledger's lifecycle.
///
/// Endpoints (see `GET /openapi.yaml`):
/// - `POST /v1/receipts/verify` (permission `receipts.verify`)
/// - `POST /v1/transactions/verify` (`transactions.verify`)
/// - `POST /v1/notifications/apple` (authenticated by the notification's signature)
/// - `GET /v1/accounts/{account}/entitlements` (`entitlements.read`)
/// - `POST /v1/accounts/{account}/consumables/{productId}/consume` (`consumables.consume`)
/// - `GET /v1/sync/status` (`sync.read`), `POST /v1/sync/test-notification` (`sync.manage`),
///   `POST /v1/accounts/{account}/refresh` (`accounts.refresh`)
/// - `POST /verifyReceipt` (`verifyreceipt`, or the shared secret as `password`)
/// - `GET /healthz`, `GET /readyz`, `GET /metrics`, `GET /openapi.yaml` (no key)
/// - `/console/…`: the web console (HTML; a session signed in with a `console` key), see ``Console``
///
/// The ledger is closed by the application when it shuts down, after the server has finished
/// the requests in flight.
///
/// - Parameters:
///   - configuration: The checked configuration (``ServerConfiguration/load(environment:)``).
///   - ledger: The open ledger (``LedgerOpener/open(_:logger:)``, or an in-memory one in tests).
///   - metrics: The server's instruments.
///   - now: The clock (receipt expiry, subscription states, consumption times).
///   - logger: The service's logger.
///   - onServerRunning: Called once the server listens (its channel tells the bound port).
public func buildApplication(
    configuration: ServerConfiguration,
    ledger: any Ledger,
    metrics: ServerMetrics = ServerMetrics(),
    now: @escaping @Sendable () -> Date = { Date() },
    logger: Logger,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> StoreGateApplication {
    buildApplication(
        configuration: configuration, opened: OpenedLedger(ledger), metrics: metrics, now: now, logger: logger,
        onServerRunning: onServerRunning
    )
}

/// Assembles the StoreGate service around a ledger ``LedgerOpener/open(_:logger:connectTimeout:)``
/// opened: its services (PostgreSQL's connection pool) run in the application's service group
/// and stop after the ledger is closed; its preparation (PostgreSQL's migrations) finishes
/// before the server accepts a connection, and its failure stops start-up.
///
/// - Parameters:
///   - configuration: The checked configuration.
///   - opened: The opened ledger and what must run for it.
///   - metrics: The server's instruments.
///   - now: The clock.
///   - logger: The service's logger.
///   - onServerRunning: Called once the server listens.
public func buildApplication(
    configuration: ServerConfiguration,
    opened: OpenedLedger,
    metrics: ServerMetrics = ServerMetrics(),
    now: @escaping @Sendable () -> Date = { Date() },
    logger: Logger,
    onServerRunning: @escaping @Sendable (any Channel) async -> Void = { _ in }
) -> StoreGateApplication {
    let ledger = opened.ledger
    let verification = ProofVerification(configuration: configuration, now: now)
    let sync = SyncRunner(configuration: configuration, verification: verification, ledger: ledger, metrics: metrics, logger: logger, now: now)
    let endpoints = Endpoints(
        configuration: configuration,
        verification: verification,
        ledger: ledger,
        appStore: sync?.access,
        metrics: metrics,
        now: now,
        openAPIDocument: OpenAPIDocument.load(),
        logger: logger
    )
    // Every route, for 405 with Allow when a path exists and its method does not.
    let routeTable = RouteTable(Console.routes + [
        ("/v1/receipts/verify", [.post]),
        ("/v1/transactions/verify", [.post]),
        ("/v1/notifications/apple", [.post]),
        ("/v1/accounts/:account/entitlements", [.get, .head]),
        ("/v1/accounts/:account/consumables/:productId/consume", [.post]),
        ("/v1/events", [.get, .head]),
        ("/v1/webhooks/deliveries", [.get, .head]),
        ("/v1/webhooks/deliveries/:endpoint/:sequence/redeliver", [.post]),
        ("/v1/sync/status", [.get, .head]),
        ("/v1/accounts/:account/refresh", [.post]),
        ("/v1/sync/test-notification", [.post]),
        ("/verifyReceipt", [.get, .head, .post]),
        ("/healthz", [.get, .head]),
        ("/readyz", [.get, .head]),
        ("/metrics", [.get, .head]),
        ("/openapi.yaml", [.get, .head]),
    ])
    let router = Router(context: StoreGateRequestContext.self, options: [.autoGenerateHeadEndpoints])
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    router.add(middleware: ErrorMiddleware(bodyLimit: configuration.maxBodyBytes, routes: routeTable))

    func keyed(_ permission: Permission) -> RouterGroup<StoreGateRequestContext> {
        router.group().add(middleware: APIKeyMiddleware(keys: configuration.apiKeys, permission: permission))
    }
    keyed(.receiptsVerify).post("/v1/receipts/verify", use: endpoints.verifyReceipt)
    keyed(.transactionsVerify).post("/v1/transactions/verify", use: endpoints.verifyTransaction)
    router.post("/v1/notifications/apple", use: endpoints.receiveNotification)
    keyed(.entitlementsRead).get("/v1/accounts/:account/entitlements", use: endpoints.readEntitlements)
    keyed(.consumablesConsume).post("/v1/accounts/:account/consumables/:productId/consume", use: endpoints.consume)
    keyed(.eventsRead).get("/v1/events", use: endpoints.readEvents)
    keyed(.webhooksManage).get("/v1/webhooks/deliveries", use: endpoints.readDeliveries)
    keyed(.webhooksManage).post("/v1/webhooks/deliveries/:endpoint/:sequence/redeliver", use: endpoints.redeliver)
    keyed(.syncRead).get("/v1/sync/status", use: endpoints.readSyncStatus)
    keyed(.accountsRefresh).post("/v1/accounts/:account/refresh", use: endpoints.refreshAccount)
    keyed(.syncManage).post("/v1/sync/test-notification", use: endpoints.testNotification)
    router.post("/verifyReceipt", use: endpoints.verifyReceiptLegacy)
    router.get("/healthz", use: endpoints.health)
    router.get("/readyz", use: endpoints.ready)
    router.get("/metrics", use: endpoints.metricsExposition)
    router.get("/openapi.yaml", use: endpoints.openAPI)
    router.get("/verifyReceipt", use: endpoints.verifyReceiptWrongMethod)
    // The web console; its sessions live in this instance's memory.
    let sessions = MemoryPersistDriver()
    Console(endpoints: endpoints, persist: sessions).register(on: router)

    var app = Application(
        router: router,
        configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port), serverName: "StoreGate"),
        onServerRunning: onServerRunning,
        logger: logger
    )
    // Shut down in reverse order: the server drains, then the ledger closes, then its pool stops.
    app.addServices(opened.services)
    app.addServices(LedgerService(ledger: ledger, logger: logger))
    app.addServices(sessions)  // expires old console sessions
    // Periods and grace periods that end without a write still reach the event stream.
    app.addServices(SubscriptionClockService(ledger: ledger, interval: configuration.clockInterval, logger: logger))
    if let retention = configuration.eventsRetention {
        app.addServices(EventRetentionService(ledger: ledger, retention: retention, logger: logger))
    }
    if let webhooks = WebhookRunner(configuration: configuration, ledger: ledger, logger: logger) {
        app.addServices(webhooks)
    }
    if let sync {
        app.addServices(sync)
    }
    app.beforeServerStarts(perform: opened.prepare)
    return app
}

/// Runs the application in a `ServiceGroup` that shuts it down gracefully on SIGTERM and
/// SIGINT: the server stops accepting connections, finishes the requests in flight (within
/// the configured grace period), then the ledger is closed.
public func runApplication(_ app: StoreGateApplication, configuration: ServerConfiguration, logger: Logger) async throws {
    var groupConfiguration = ServiceGroupConfiguration(
        services: [app],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
    groupConfiguration.maximumGracefulShutdownDuration = configuration.shutdownGracePeriod
    try await ServiceGroup(configuration: groupConfiguration).run()
}

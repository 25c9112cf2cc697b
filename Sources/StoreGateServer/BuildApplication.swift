public import Foundation
import HTTPTypes
public import Hummingbird
public import Logging
import NIOCore
public import ServiceLifecycle
import StoreGateConsole
import StoreGateCore
import StoreGateEvents
import StoreGateSync
public import StoreGateLedger
import UnixSignals
import StoreGateWorkers

/// The StoreGate HTTP application type ``buildApplication(configuration:ledger:metrics:now:logger:onServerRunning:)`` returns.
public typealias StoreGateApplication = Application<RouterResponder<StoreGateRequestContext>>

/// Assembles the StoreGate service around an open ledger: the router with every endpoint, the
/// middleware (metrics, errors, API keys) and the ledger's lifecycle.
///
/// The endpoints are declared once, feature by feature (``Endpoints/routes`` and the console's
/// `Console.routes(for:)`; `GET /openapi.yaml` documents the API's), each with the permission
/// its API key needs.
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
    // Background workers wait here until the ledger is migrated and reachable.
    let gate = StartGate()
    let workers = WorkerRegistry()
    let catalog = CatalogStore(configuration.catalog, path: configuration.productsFile)
    let verification = ProofVerification(configuration: configuration, now: now)
    let sync = SyncRunner(
        configuration: configuration, verification: verification, ledger: ledger, gate: gate, registry: workers, metrics: metrics, logger: logger,
        now: now
    )
    let webhooks = WebhookRunner(configuration: configuration, ledger: ledger, gate: gate, registry: workers, metrics: metrics, logger: logger)
    let keys = APIKeyAuthenticator(configuration: configuration, store: ledger, now: now, logger: logger)
    let openAPIDocument = OpenAPIDocument.load()
    if openAPIDocument == nil {
        logger.error(
            "the OpenAPI document is missing beside the binary: GET /openapi.yaml answers 404",
            metadata: ["bundle": "\(OpenAPIDocument.bundle.name)", "searched": "\(OpenAPIDocument.bundle.searchFolders.map(\.path))"]
        )
    }
    let endpoints = Endpoints(
        configuration: configuration,
        verification: verification,
        ledger: ledger,
        appStore: sync?.access,
        metrics: metrics,
        workers: workers,
        catalog: catalog,
        now: now,
        openAPIDocument: openAPIDocument,
        logger: logger,
        keys: keys,
        webhooks: webhooks.service
    )
    // The web console; its sessions live in this instance's memory.
    let sessions = MemoryPersistDriver()
    let console = Console(endpoints: endpoints, persist: sessions)
    if !console.resourceProblems.isEmpty {
        // The API serves on; the console answers 503 on every route until its files are installed.
        logger.error(
            "the web console is unavailable (every /console route answers 503): its resource bundle is missing or incomplete beside the binary",
            metadata: ["bundle": "\(console.resourceBundle.name)", "problems": "\(console.resourceProblems.joined(separator: "; "))"]
        )
    }
    let routes = applicationRoutes(endpoints, console: console)
    let router = Router(context: StoreGateRequestContext.self, options: [.autoGenerateHeadEndpoints])
    if configuration.exportsTraces {
        // First, so the request's span (a child of an incoming `traceparent`) holds every
        // other middleware and the handler; left out when traces are off, so an untraced
        // request pays nothing for it.
        router.add(middleware: TracingMiddleware())
    }
    router.add(middleware: MetricsMiddleware(metrics: metrics))
    // 405 with Allow when a path exists and its method does not.
    router.add(middleware: ErrorMiddleware(bodyLimit: configuration.maxBodyBytes, routes: RouteTable(Route.allowedMethods(of: routes))))
    router.register(routes, keys: keys, console: console.serviceMiddleware)

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
    if catalog.path != nil {
        app.addServices(CatalogReloadService(store: catalog, logger: logger))
    }
    // Periods and grace periods that end without a write still reach the event stream.
    var ledgerWorkers: [any PeriodicWorker] = [SubscriptionClockService(ledger: ledger, interval: configuration.clockInterval, logger: logger, now: now)]
    // The analytics rollups: each write queues its changes, this folds them every second.
    ledgerWorkers.append(RollupFoldService(ledger: ledger))
    if let retention = configuration.eventsRetention {
        ledgerWorkers.append(EventRetentionService(ledger: ledger, retention: retention, logger: logger, now: now))
    }
    // entitlement.changed: the catalog's entitlements announced as they flip or move.
    let tracker = EntitlementTracker(
        ledger: ledger, catalog: { catalog.current }, holder: "storegate-\(UUID().uuidString.lowercased())", logger: logger, now: now
    )
    ledgerWorkers.append(tracker)
    app.addServices(WorkerGroup(ledgerWorkers, gate: gate, registry: workers, logger: logger, metrics: metrics.instrumentFactory))
    app.addServices(webhooks)
    if let sync {
        app.addServices(sync)
    }
    let firstSight = sync?.firstSight
    let transactionActions = sync?.transactionActions
    app.beforeServerStarts {
        try await opened.prepare()
        // The configured webhook endpoints join the ledger's (once: an endpoint of that name
        // already stored, perhaps changed through the API since, is left as it is).
        do throws(LedgerError) {
            try await retryingStorage(for: .seconds(15)) { () throws(LedgerError) in
                try await seedWebhookEndpoints(configuration.webhooks, into: ledger, at: now(), logger: logger)
            }
        } catch where error.code == .closed {
            logger.warning("the configured webhook endpoints were not seeded: the ledger is closed")
        } catch {
            throw ConfigurationError(ServerConfiguration.Setting.webhooksFile.rawValue, "cannot store the configured webhook endpoints: \(error.code): \(error.reason)")
        }
        // Before the first request: every fact recorded from now on is after the followers' places.
        for (name, initialize) in [("entitlement tracker", tracker.initializePlace), ("first-sight refresh", firstSight?.initializePlace),
                                  ("transaction actions", transactionActions?.initializePlace)] {
            guard let initialize else { continue }
            do throws(LedgerError) {
                // A busy database may miss one operation's deadline at start-up: try for 15 s, as
                // reaching it may take.
                try await retryingStorage(for: .seconds(15)) { () throws(LedgerError) in try await initialize() }
            } catch where error.code == .closed {
                // An application run again after its ledger closed (a test): nothing to follow.
                logger.warning("a follower's place was not set: the ledger is closed", metadata: ["follower": "\(name)"])
            } catch {
                throw ConfigurationError(
                    ServerConfiguration.Setting.database.rawValue, "cannot set the \(name)'s place in the ledger: \(error.code): \(error.reason)"
                )
            }
        }
        gate.open()
    }
    return app
}

/// Stores each configured endpoint that the ledger does not hold yet (idempotent).
func seedWebhookEndpoints(_ endpoints: [WebhookEndpoint], into store: any WebhookEndpointStore, at date: Date, logger: Logger) async throws(LedgerError) {
    for endpoint in endpoints {
        let stored = StoredWebhookEndpoint(
            name: endpoint.name, url: endpoint.url, secrets: endpoint.secrets.map(\.text), types: endpoint.types.map { Array($0) },
            isPaused: endpoint.isPaused, source: .configuration, createdAt: date, updatedAt: date
        )
        if try await store.createWebhookEndpoint(stored) {
            logger.notice("a configured webhook endpoint was stored in the ledger", metadata: ["endpoint": "\(endpoint.name)"])
        } else {
            logger.debug("a configured webhook endpoint is already stored; the stored one is kept", metadata: ["endpoint": "\(endpoint.name)"])
        }
    }
}

/// Runs `body`, again after a storage failure (with a growing pause) until `limit` has passed.
private func retryingStorage(for limit: Duration, _ body: () async throws(LedgerError) -> Void) async throws(LedgerError) {
    let deadline = ContinuousClock.now + limit
    let backoff = Backoff(first: .milliseconds(100), maximum: .seconds(2))
    var failures = 0
    while true {
        do throws(LedgerError) {
            return try await body()
        } catch where error.code == .storage && ContinuousClock.now < deadline {
            failures += 1
            try? await Task.sleep(for: backoff.delay(afterFailures: failures))
        }
    }
}

/// Every route the application serves: the API's and the console's.
func applicationRoutes(_ endpoints: Endpoints, console: Console) -> [Route] {
    endpoints.routes + console.serviceRoutes
}

/// Runs the application in a `ServiceGroup` that shuts it down gracefully on SIGTERM and
/// SIGINT: the server stops accepting connections, finishes the requests in flight (within
/// the configured grace period), then the ledger is closed.
///
/// - Parameters:
///   - app: The application.
///   - configuration: Its configuration (the shutdown grace period).
///   - logger: The service group's logger.
///   - telemetry: Services that must outlive the application (the OTLP trace exporter): they
///     start first and stop last, after the application has stopped, so the spans of the
///     last requests are flushed.
public func runApplication(
    _ app: StoreGateApplication, configuration: ServerConfiguration, logger: Logger, telemetry: [any Service] = []
) async throws {
    var groupConfiguration = ServiceGroupConfiguration(
        services: telemetry + [app],
        gracefulShutdownSignals: [.sigterm, .sigint],
        logger: logger
    )
    groupConfiguration.maximumGracefulShutdownDuration = configuration.shutdownGracePeriod
    try await ServiceGroup(configuration: groupConfiguration).run()
}

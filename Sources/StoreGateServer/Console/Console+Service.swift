import Hummingbird
import StoreGateConsole

extension Console {
    /// The service's console: its read model over `endpoints`, its sessions in `persist`.
    init(endpoints: Endpoints, persist: any PersistDriver) {
        self.init(model: ServiceConsoleModel(endpoints), persist: persist)
    }

    /// The console's route table as the service's routes: undocumented (HTML pages are not the
    /// API), open or behind a console session.
    var serviceRoutes: [Route] {
        routes(for: StoreGateRequestContext.self).map(Route.init(console:))
    }

    /// What the service puts in front of the console's routes: the security headers on every
    /// one, the session check on those that need it.
    var serviceMiddleware: ConsoleMiddleware {
        ConsoleMiddleware(headers: securityHeaders(for: StoreGateRequestContext.self), authentication: authentication(for: StoreGateRequestContext.self))
    }
}

/// The console's middleware, as the service registers its routes.
struct ConsoleMiddleware: Sendable {
    /// The Content-Security-Policy and `nosniff`, on every console response.
    let headers: ContentSecurityMiddleware<StoreGateRequestContext>
    /// The session check.
    let authentication: ConsoleAuthMiddleware<StoreGateRequestContext>
}

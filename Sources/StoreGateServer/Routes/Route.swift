import HTTPTypes
import Hummingbird
import StoreGateConsole

/// Who may call a route.
enum RouteAccess: Sendable, Hashable {
    /// Anyone: health, metrics, the OpenAPI document, and routes that authenticate the request
    /// themselves (Apple's notifications by their signature, `/verifyReceipt` by its key or
    /// shared secret, the console's sign-in).
    case open
    /// A bearer API key with this permission (401 without one, 403 without the permission).
    case apiKey(Permission)
    /// A signed-in console session (its CSRF token on every form).
    case consoleSession
}

/// One route, declared once: its method, path, access and handler. The feature's table
/// (``Endpoints/routes``, the console's `Console.routes(for:)`) registers it, feeds the 405/`Allow` answers
/// (``RouteTable``) and is checked against `openapi.yaml` by the tests.
struct Route: Sendable {
    /// The method (`GET` also answers `HEAD`).
    let method: HTTPRequest.Method
    /// A Hummingbird path template: `/v1/accounts/:account/entitlements`.
    let path: String
    /// Who may call it.
    let access: RouteAccess
    /// Whether `openapi.yaml` documents it (the console's HTML pages are not an API).
    let isDocumented: Bool
    /// Whether it is the console's (behind the console's security headers).
    let isConsole: Bool
    /// The handler.
    let handler: @Sendable (Request, StoreGateRequestContext) async throws -> Response

    init<Output: ResponseGenerator>(
        _ method: HTTPRequest.Method, _ path: String, _ access: RouteAccess, documented: Bool = true,
        _ handler: @escaping @Sendable (Request, StoreGateRequestContext) async throws -> Output
    ) {
        self.method = method
        self.path = path
        self.access = access
        self.isDocumented = documented
        self.isConsole = false
        self.handler = { request, context in try await handler(request, context).response(from: request, context: context) }
    }

    /// A console route: undocumented, open or behind a console session.
    init(console route: ConsoleRoute<StoreGateRequestContext>) {
        self.method = route.method
        self.path = route.path
        self.access = route.needsSession ? .consoleSession : .open
        self.isDocumented = false
        self.isConsole = true
        self.handler = route.handler
    }

    /// The path as OpenAPI writes it: `/v1/accounts/{account}/entitlements`.
    var openAPIPath: String {
        path.split(separator: "/", omittingEmptySubsequences: false)
            .map { $0.hasPrefix(":") ? "{\($0.dropFirst())}" : String($0) }
            .joined(separator: "/")
    }

    /// The methods a path answers, `HEAD` with every `GET` (the router generates them).
    static func allowedMethods(of routes: [Route]) -> [(template: String, methods: [HTTPRequest.Method])] {
        var order: [String] = []
        var methods: [String: [HTTPRequest.Method]] = [:]
        for route in routes {
            if methods[route.path] == nil { order.append(route.path) }
            var list = methods[route.path, default: []]
            for method in route.method == .get ? [.get, .head] : [route.method] where !list.contains(method) {
                list.append(method)
            }
            methods[route.path] = list
        }
        return order.map { ($0, methods[$0] ?? []) }
    }
}

extension Router where Context == StoreGateRequestContext {
    /// Registers `routes`, each behind the middleware its access needs.
    func register(_ routes: [Route], keys: APIKeyAuthenticator, console: ConsoleMiddleware) {
        for route in routes {
            var group = self.group()
            if route.isConsole { group = group.add(middleware: console.headers) }
            switch route.access {
            case .open: break
            case .apiKey(let permission): group = group.add(middleware: APIKeyMiddleware(keys: keys, permission: permission))
            case .consoleSession: group = group.add(middleware: console.authentication)
            }
            group.on(RouterPath(route.path), method: route.method, use: route.handler)
        }
    }
}

public import HTTPTypes
public import Hummingbird

/// One console route, declared once in ``Console/routes(for:)``: its method, path, whether it
/// needs a session, and its handler. The service registers the table beside its own (one
/// route table feeds its registration and its 405/`Allow` answers).
public struct ConsoleRoute<Context: ConsoleRequestContext>: Sendable {
    /// The method (`GET` also answers `HEAD`).
    public let method: HTTPRequest.Method
    /// A Hummingbird path template: `/console/accounts/:account`.
    public let path: String
    /// Whether the route needs a signed-in session (``ConsoleAuthMiddleware``); the sign-in
    /// and the assets do not.
    public let needsSession: Bool
    /// The handler.
    public let handler: @Sendable (Request, Context) async throws -> Response

    init(_ method: HTTPRequest.Method, _ path: String, session needsSession: Bool, _ handler: @escaping @Sendable (Request, Context) async throws -> Response) {
        self.method = method
        self.path = path
        self.needsSession = needsSession
        self.handler = handler
    }
}

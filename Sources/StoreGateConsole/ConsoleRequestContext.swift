public import Hummingbird

/// A request context the console's routes run in: Hummingbird's, plus the console session its
/// middleware (``ConsoleAuthMiddleware``) found for the request.
public protocol ConsoleRequestContext: RequestContext {
    /// The request's console session, once ``ConsoleAuthMiddleware`` checked it; `nil` before
    /// and on the open routes (the sign-in, the assets).
    var consoleSession: ConsoleSession? { get set }
}

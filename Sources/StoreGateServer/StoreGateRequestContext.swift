public import Hummingbird
public import StoreGateConsole

/// The request context of the StoreGate service: Hummingbird's core context plus the name of
/// the API key that authenticated the request (never the key itself).
public struct StoreGateRequestContext: RequestContext, ConsoleRequestContext {
    /// Hummingbird's own per-request storage (logger, parameters, endpoint path).
    public var coreContext: CoreRequestContextStorage
    /// The name of the API key that authenticated the request, once a middleware checked it.
    public var apiKeyName: String?
    /// The console session the request belongs to, once the console's middleware checked it.
    public var consoleSession: ConsoleSession?
    /// The caller the API key identifies (its permissions), once a middleware checked it.
    var apiCaller: APICaller?

    /// Creates the context of a new request.
    public init(source: Source) {
        self.coreContext = .init(source: source)
        self.apiKeyName = nil
        self.consoleSession = nil
        self.apiCaller = nil
    }
}

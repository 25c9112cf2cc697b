import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdTLS
import NIOCore
public import StoreGateAppStoreClient
import StoreGateCore
import Synchronization

/// A local stand-in for Apple's verifyReceipt and App Store Server API endpoints: a
/// Hummingbird app on 127.0.0.1, port 0, so no test ever touches Apple's network.
///
/// Layout (what ``VerifyReceiptEndpoints/init(standIn:)`` and
/// ``AppStoreServerAPIEndpoints/init(standIn:)`` point at):
/// - `POST {base}/production/verifyReceipt`, `POST {base}/sandbox/verifyReceipt`: answers from
///   the receipts registered with ``registerReceipt(_:environment:reply:sharedSecret:)``, with
///   Apple's routing (a sandbox receipt sent to production gets 21007, a production receipt
///   sent to the sandbox 21008), any status on demand, latency and failure injection, and a
///   "forged" mode that answers status 0 for anything.
/// - `{base}/production/inApps/…`, `{base}/sandbox/inApps/…`: the Server API endpoints, each
///   request's JWT checked against the configured key (``ServerAPIAccount``); answers carry
///   the signed payloads the test stored (minted with ``JWSMinter`` by the test CA).
///
/// Run it with ``run(tls:_:)``; it stops when the closure returns. Every knob is thread-safe.
public final class AppleStandIn: Sendable {
    /// A failure the stand-in answers instead of a normal reply.
    public enum Failure: Sendable, Hashable {
        /// This HTTP status with an empty body.
        case httpStatus(Int)
        /// HTTP 200 with a body that is not JSON.
        case malformedBody
        /// HTTP 200 with `{"status": N}` (verifyReceipt only).
        case status(VerifyReceiptStatus)
        /// HTTP 429 with this `Retry-After` header value and Apple's rate-limit error body.
        case rateLimited(retryAfter: String)
        /// This HTTP status with an App Store Server API error body.
        case apiError(AppStoreAPIErrorCode, httpStatus: Int)
    }

    /// The two halves of the stand-in, for counters and injected failures.
    public enum Service: String, Sendable, Hashable {
        case verifyReceipt
        case serverAPI
    }

    struct State {
        var latency: Duration = .zero
        var pendingFailures: [Service: [Failure]] = [:]
        var alwaysFailing: [Service: Failure] = [:]
        var requestCounts: [String: Int] = [:]
        // verifyReceipt
        var receipts: [String: RegisteredReceipt] = [:]
        var forcedStatus: [AppStoreEnvironment: VerifyReceiptStatus] = [:]
        var forgedReply: VerifyReceiptResponse?
        var verifyReceiptRequests: [VerifyReceiptCall] = []
        // Server API
        var account: ServerAPIAccount?
        var serverAPIData: [AppStoreEnvironment: ServerAPIData] = [:]
        var authFailures: [AuthFailure] = []
        var serverAPIRequests: [ServerAPICall] = []
        var nextTestNotification = 0
        var expiringPaginationTokens = 0
        var notificationURLs: [AppStoreEnvironment: String] = [:]
        var testDeliveries: [String: [(date: Date, result: String)]] = [:]
        var consumptionRequests: [ConsumptionCall] = []
        var consumptionRefusals: [ConsumptionRefusalCall] = []
        var notificationDates: [String: Int64] = [:]
        var notificationWindows: [String: [String]] = [:]
        var finishedTransactions: [FinishedTransaction] = []
        var extensionAnswers: [String: [UInt8]] = [:]
        var massExtensions: [String: MassExtensionRecord] = [:]
    }

    let state = Mutex(State())
    private let port = Mutex<Int?>(nil)
    private let tlsCertificateDER = Mutex<[UInt8]?>(nil)

    init() {}

    /// The base URL, such as `http://127.0.0.1:53127` (`https://localhost:…` over TLS).
    public var baseURL: String {
        let port = port.withLock { $0 } ?? 0
        return tlsCertificateDER.withLock { $0 } == nil ? "http://127.0.0.1:\(port)" : "https://localhost:\(port)"
    }

    /// The port the stand-in listens on.
    public var listeningPort: Int { port.withLock { $0 } ?? 0 }

    /// The self-signed certificate of a TLS stand-in, DER; `nil` over plain HTTP.
    public var certificateDER: [UInt8]? { tlsCertificateDER.withLock { $0 } }

    /// verifyReceipt endpoints pointing here.
    public var verifyReceiptEndpoints: VerifyReceiptEndpoints { VerifyReceiptEndpoints(standIn: baseURL) }

    /// Server API endpoints pointing here.
    public var serverAPIEndpoints: AppStoreServerAPIEndpoints { AppStoreServerAPIEndpoints(standIn: baseURL) }

    // MARK: Running

    /// Starts a stand-in on 127.0.0.1 (port 0), runs `body` with it, and stops it.
    ///
    /// - Parameters:
    ///   - tls: Serve HTTPS with a fresh self-signed certificate for `localhost` (trusted by
    ///     nothing, which is the point of the "untrusted server" test).
    ///   - port: The port on 127.0.0.1; 0 (the default) lets the system choose a free one.
    public static func run<T: Sendable>(tls: Bool = false, port: Int = 0, _ body: @Sendable (AppleStandIn) async throws -> T) async throws -> T {
        let standIn = AppleStandIn()
        var server = HTTPServerBuilder.http1()
        if tls {
            let identity = try SelfSignedIdentity.make()
            standIn.tlsCertificateDER.withLock { $0 = identity.certificateDER }
            server = try .tls(.http1(), tlsConfiguration: identity.serverConfiguration())
        }
        return try await TestHTTPServer.run(standIn.router(), name: "StoreGate Apple stand-in", server: server, port: port) { bound in
            standIn.port.withLock { $0 = bound }
            return try await body(standIn)
        }
    }

    /// Why the stand-in could not do what a test asked.
    public struct StandInError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    // MARK: Knobs shared by both services

    /// Delays every answer by `latency`.
    public func setLatency(_ latency: Duration) {
        state.withLock { $0.latency = latency }
    }

    /// Answers the next `count` requests to `service` with `failure`, then behaves again.
    public func failNext(_ count: Int, of service: Service, with failure: Failure) {
        state.withLock { $0.pendingFailures[service, default: []] += Array(repeating: failure, count: count) }
    }

    /// Answers every request to `service` with `failure` until ``stopFailing(_:)``.
    public func failAlways(_ service: Service, with failure: Failure) {
        state.withLock { $0.alwaysFailing[service] = failure }
    }

    /// Ends ``failAlways(_:with:)``.
    public func stopFailing(_ service: Service) {
        state.withLock { $0.alwaysFailing[service] = nil }
    }

    /// How many requests reached `route` (`production/verifyReceipt`, `sandbox/inApps/v2/history`, …);
    /// every route of a service when `route` is `nil`.
    public func requestCount(_ service: Service, route: String? = nil) -> Int {
        state.withLock { state in
            if let route { return state.requestCounts[route] ?? 0 }
            let prefix = service == .verifyReceipt ? "verifyReceipt" : "inApps"
            return state.requestCounts.filter { $0.key.contains(prefix) }.values.reduce(0, +)
        }
    }

    // MARK: Shared request plumbing

    /// Counts the request, waits the latency, and returns the failure to inject, if any.
    func admit(_ service: Service, route: String) async throws -> Failure? {
        let (latency, failure) = state.withLock { state -> (Duration, Failure?) in
            state.requestCounts[route, default: 0] += 1
            if var queue = state.pendingFailures[service], !queue.isEmpty {
                let failure = queue.removeFirst()
                state.pendingFailures[service] = queue
                return (state.latency, failure)
            }
            return (state.latency, state.alwaysFailing[service])
        }
        if latency > .zero {
            try await Task.sleep(for: latency)
        }
        return failure
    }

    static func json(_ bytes: [UInt8], status: HTTPResponse.Status = .ok, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    static func json(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        json(Array(text.utf8), status: status)
    }

    static func response(for failure: Failure) -> Response {
        switch failure {
        case .httpStatus(let code):
            return Response(status: .init(code: code))
        case .malformedBody:
            return json("<html>not json</html>")
        case .status(let status):
            return json("{\"status\":\(status.rawValue)}")
        case .rateLimited(let retryAfter):
            var headers = HTTPFields()
            headers[.retryAfter] = retryAfter
            return json(Array("{\"errorCode\":4290000,\"errorMessage\":\"Rate limit exceeded.\"}".utf8), status: .tooManyRequests, headers: headers)
        case .apiError(let code, let httpStatus):
            return json(Array("{\"errorCode\":\(code.rawValue),\"errorMessage\":\"\(code.meaning)\"}".utf8), status: .init(code: httpStatus))
        }
    }

    func router() -> Router<BasicRequestContext> {
        let router = Router(context: BasicRequestContext.self)
        addVerifyReceiptRoutes(to: router)
        addServerAPIRoutes(to: router)
        addPurchaseRoutes(to: router)
        return router
    }
}

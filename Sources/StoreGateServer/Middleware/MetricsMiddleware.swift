import Dispatch
import Hummingbird
import Synchronization

/// Counts every request by method, route template and status, and records its latency.
///
/// The route is the matched template (`/v1/accounts/{account}/entitlements`), never the
/// concrete path, so the labels stay few; unmatched paths count as `unmatched`.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = StoreGateRequestContext
    let metrics: ServerMetrics
    private let templates = Templates()

    init(metrics: ServerMetrics) {
        self.metrics = metrics
    }

    /// The template of each matched path, written once: the paths are the router's own, so
    /// there are as many entries as routes.
    private final class Templates: Sendable {
        private let written = Mutex<[String: String]>([:])

        func template(_ path: String) -> String {
            if let known = written.withLock({ $0[path] }) { return known }
            let template = MetricsMiddleware.template(path)
            written.withLock { $0[path] = template }
            return template
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        let response = try await next(request, context)
        let elapsed = DispatchTime.now().uptimeNanoseconds &- start
        let route: String
        switch context.endpointPath {
        case .none, "NotFound": route = "unmatched"
        case .some(let path): route = templates.template(path)
        }
        metrics.request(method: request.method.rawValue, route: route, status: response.status.code, nanoseconds: elapsed)
        return response
    }

    /// Hummingbird writes parameters as `:name`; OpenAPI and the README write `{name}`.
    static func template(_ path: String) -> String {
        path.split(separator: "/", omittingEmptySubsequences: false).map { segment in
            segment.hasPrefix(":") ? "{\(segment.dropFirst())}" : String(segment)
        }.joined(separator: "/")
    }
}

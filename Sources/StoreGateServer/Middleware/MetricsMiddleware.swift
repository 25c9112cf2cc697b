import Dispatch
import Hummingbird

/// Counts every request by method, route template and status, and records its latency.
///
/// The route is the matched template (`/v1/accounts/{account}/entitlements`), never the
/// concrete path, so the labels stay few; unmatched paths count as `unmatched`.
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = StoreGateRequestContext
    let metrics: ServerMetrics

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = DispatchTime.now().uptimeNanoseconds
        let response = try await next(request, context)
        let elapsed = DispatchTime.now().uptimeNanoseconds &- start
        let route: String
        switch context.endpointPath {
        case .none, "NotFound": route = "unmatched"
        case .some(let path): route = Self.template(path)
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

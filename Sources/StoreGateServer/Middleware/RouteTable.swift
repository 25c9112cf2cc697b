import HTTPTypes

/// The service's routes by path template, for answering 405 (with `Allow`) instead of 404
/// when the path exists but the method does not — whatever the method, `QUERY` included.
struct RouteTable: Sendable {
    private struct Route: Sendable {
        let segments: [Substring]
        let methods: [HTTPRequest.Method]
    }

    private let routes: [Route]

    /// Routes as Hummingbird templates (`/v1/accounts/:account/entitlements`) and their methods.
    init(_ routes: [(template: String, methods: [HTTPRequest.Method])]) {
        self.routes = routes.map { Route(segments: Self.segments($0.template), methods: $0.methods) }
    }

    /// The methods the path accepts, or `nil` when no route has this path.
    func allowedMethods(forPath path: String) -> [HTTPRequest.Method]? {
        let segments = Self.segments(path)
        let match = routes.first { route in
            route.segments.count == segments.count
                && zip(route.segments, segments).allSatisfy { template, segment in
                    template.hasPrefix(":") ? !segment.isEmpty : template == segment
                }
        }
        return match?.methods
    }

    private static func segments(_ path: String) -> [Substring] {
        let pathOnly = path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        var segments = pathOnly.split(separator: "/", omittingEmptySubsequences: false)
        if segments.first == "" { segments.removeFirst() }
        if segments.count > 1, segments.last == "" { segments.removeLast() }
        return segments
    }
}

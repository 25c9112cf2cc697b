import HTTPTypes
import Hummingbird
import Logging

/// Requires a bearer API key with one permission: 401 without a key or with an unknown one,
/// 403 for a known key that lacks the permission.
///
/// The key is matched by ``APIKeyAuthenticator`` (configured keys by digest in constant time,
/// ledger-stored keys by digest through an index); the context records the key's name. Neither
/// the key nor the `Authorization` header is logged. A key over its rate limit gets 429.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = StoreGateRequestContext
    let keys: APIKeyAuthenticator
    let permission: Permission

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let caller = try await keys.authenticate(request)
        var context = context
        context.apiKeyName = caller.name
        context.apiCaller = caller
        context.logger[metadataKey: "api_key"] = .string(caller.name)
        // Every authenticated request counts against the key's rate, refused ones too.
        try keys.checkRate(caller)
        guard caller.permissions.contains(permission) else {
            throw APIError.forbidden(permission)
        }
        return try await next(request, context)
    }

    /// The token of a `Bearer` authorization header (scheme case-insensitive), or `nil`.
    static func bearerToken(_ header: String) -> Substring? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].drop { $0 == " " }
        return token.isEmpty ? nil : token
    }
}

import HTTPTypes
import Hummingbird
import Logging

/// Requires a bearer API key with one permission: 401 without a key or with an unknown one,
/// 403 for a known key that lacks the permission.
///
/// The key is matched by ``APIKeyStore/match(_:)`` (digests compared in constant time); the
/// context records the key's name. Neither the key nor the `Authorization` header is logged.
struct APIKeyMiddleware: RouterMiddleware {
    typealias Context = StoreGateRequestContext
    let keys: APIKeyStore
    let permission: Permission

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let key = try Self.authenticate(request, keys: keys)
        guard key.permissions.contains(permission) else {
            throw APIError.forbidden(permission)
        }
        var context = context
        context.apiKeyName = key.name
        context.logger[metadataKey: "api_key"] = .string(key.name)
        return try await next(request, context)
    }

    /// The configured key the request's `Authorization: Bearer …` header presents.
    ///
    /// - Throws: 401 ``APIError`` when the header is absent, not a bearer token, or unknown.
    static func authenticate(_ request: Request, keys: APIKeyStore) throws(APIError) -> APIKeyStore.Key {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized("this endpoint needs an API key: send Authorization: Bearer <key>")
        }
        guard let token = bearerToken(header) else {
            throw APIError.unauthorized("the Authorization header is not 'Bearer <key>'")
        }
        guard let key = keys.match(token) else {
            throw APIError.unauthorized("the API key is not valid")
        }
        return key
    }

    /// The token of a `Bearer` authorization header (scheme case-insensitive), or `nil`.
    static func bearerToken(_ header: String) -> Substring? {
        let parts = header.split(separator: " ", maxSplits: 1, omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return nil }
        let token = parts[1].drop { $0 == " " }
        return token.isEmpty ? nil : token
    }
}

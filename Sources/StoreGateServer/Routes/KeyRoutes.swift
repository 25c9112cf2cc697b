import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import StoreGateCore
import StoreGateLedger

/// `POST /v1/keys` (`APIKeyRequest`).
struct APIKeyRequestBody: JSONRequestBody {
    let name: String
    let permissions: Set<Permission>
    let expiresAt: Date?
    let rateLimit: APIKeyRateLimit?

    init(_ object: RequestObject) throws(APIError) {
        try object.rejectUnknownMembers(["name", "permissions", "expiresAt", "rateLimit"])
        name = try object.string("name")
        guard let names = try object.optionalStrings("permissions") else {
            throw APIError.badField("permissions", .missingField, "'permissions' is required: a list such as [\"entitlements.read\"], or [\"*\"] for every one")
        }
        var permissions: Set<Permission> = []
        for name in names {
            if name == "*" {
                permissions.formUnion(Permission.allCases)
            } else if let permission = Permission(rawValue: name) {
                permissions.insert(permission)
            } else {
                throw APIError.badField("permissions", .invalidField, "unknown permission '\(name)' (\(Permission.allCases.map(\.rawValue).joined(separator: ", ")), *)")
            }
        }
        guard !permissions.isEmpty else {
            throw APIError.badField("permissions", .invalidField, "a key needs at least one permission")
        }
        self.permissions = permissions
        if let text = try object.optionalString("expiresAt") {
            guard let date = ISODuration.date(text) else {
                throw APIError.badField("expiresAt", .invalidField, "'expiresAt' is an RFC 3339 time such as 2026-12-31T23:59:59Z")
            }
            expiresAt = date
        } else {
            expiresAt = nil
        }
        if let limit = try object.optionalObject("rateLimit") {
            try limit.rejectUnknownMembers(["requests", "seconds"])
            guard let requests = try limit.optionalInteger("requests"), let seconds = try limit.optionalInteger("seconds") else {
                throw APIError.badField("rateLimit", .missingField, "'rateLimit' has 'requests' and 'seconds'")
            }
            do throws(LedgerError) {
                rateLimit = try APIKeyRateLimit(requests: requests, seconds: seconds)
            } catch {
                throw APIError.badField("rateLimit", .invalidField, error.reason)
            }
        } else {
            rateLimit = nil
        }
    }
}

/// One key on the wire (`APIKey`): never its secret, nor its digest.
struct APIKeyReply: JSONWritable {
    let name: String
    let source: String
    let permissions: [String]
    var createdAt: Date?
    var createdBy: String?
    var expiresAt: Date?
    var revokedAt: Date?
    var lastUsedAt: Date?
    var rateLimit: APIKeyRateLimit?
    var state: String
    /// Only in the reply of the creation: the key itself, shown this once.
    var secret: String?

    init(stored: StoredAPIKey, now: Date, secret: String? = nil) {
        name = stored.name
        source = "ledger"
        permissions = stored.permissions
        createdAt = stored.createdAt
        createdBy = stored.createdBy
        expiresAt = stored.expiresAt
        revokedAt = stored.revokedAt
        lastUsedAt = stored.lastUsedAt
        rateLimit = stored.rateLimit
        state = stored.revokedAt != nil ? "revoked" : stored.isUsable(at: now) ? "active" : "expired"
        self.secret = secret
    }

    init(configured key: APIKeyStore.Key, rateLimit: APIKeyRateLimit?) {
        name = key.name
        source = "configuration"
        permissions = key.permissions.map(\.rawValue).sorted()
        self.rateLimit = rateLimit
        state = "active"
    }

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("name", name)
            json.member("source", source)
            json.member("state", state)
            json.key("permissions")
            json.array(permissions)
            json.member("createdAt", createdAt)
            json.member("createdBy", createdBy)
            json.member("expiresAt", expiresAt)
            json.member("revokedAt", revokedAt)
            json.member("lastUsedAt", lastUsedAt)
            if let rateLimit {
                json.key("rateLimit")
                json.object { json in
                    json.member("requests", rateLimit.requests)
                    json.member("seconds", rateLimit.seconds)
                }
            }
            json.member("secret", secret)
        }
    }
}

/// `GET /v1/keys` (`APIKeyPage`).
struct APIKeysReply: JSONWritable {
    let keys: [APIKeyReply]

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("keys")
            json.array(keys)
        }
    }
}

extension Endpoints {
    /// `GET /v1/keys`: every key, configured and ledger-stored, by name, with its last use
    /// (ledger-stored keys; to about a minute). Never a secret.
    @Sendable func readKeys(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let stored: [StoredAPIKey]
        do throws(LedgerError) {
            stored = try await ledger.apiKeys()
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
        let at = now()
        var replies = stored.map { APIKeyReply(stored: $0, now: at) }
        replies += keys.configuredKeys.keys.map { APIKeyReply(configured: $0, rateLimit: configuration.apiKeyRateLimit) }
        return JSONReply.response(APIKeysReply(keys: replies.sorted { $0.name < $1.name }))
    }

    /// `POST /v1/keys`: creates a key and answers its secret, this once (only its SHA-256 is
    /// stored). The caller may only give permissions it holds itself.
    @Sendable func createKey(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let body = try await decode(APIKeyRequestBody.self, request)
        let caller = context.apiCaller
        let missing = body.permissions.subtracting(caller?.permissions ?? [])
        guard missing.isEmpty else {
            throw APIError(
                .forbidden, .permissionNotHeld,
                "a key may only give permissions it holds; this one lacks \(missing.map(\.rawValue).sorted().joined(separator: ", "))", field: "permissions"
            )
        }
        if let expiresAt = body.expiresAt, expiresAt <= now() {
            throw APIError.badField("expiresAt", .invalidField, "'expiresAt' is in the past")
        }
        guard !keys.configuredKeys.keys.contains(where: { $0.name == body.name }) else {
            throw APIError(.conflict, .apiKeyExists, "a configured key is named '\(body.name)'", field: "name")
        }
        let secret = APIKeyStore.randomSecret()
        let key = StoredAPIKey(
            name: body.name, digest: Array(SHA256.hash(data: Array(secret.utf8))), permissions: body.permissions.map(\.rawValue),
            createdAt: now(), createdBy: context.apiKeyName ?? "unknown", expiresAt: body.expiresAt, rateLimit: body.rateLimit
        )
        let created: Bool
        do throws(LedgerError) {
            created = try await ledger.createAPIKey(key)
        } catch where error.code == .invalidArgument {
            throw APIError.badField("name", APIErrorCode(error.code), error.reason)
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
        guard created else {
            throw APIError(.conflict, .apiKeyExists, "an API key is named '\(body.name)'", field: "name")
        }
        context.logger.notice("an API key was created", metadata: [
            "key.name": "\(key.name)", "key.permissions": "\(key.permissions.joined(separator: ","))",
            "key.expires_at": "\(key.expiresAt.map { "\($0)" } ?? "never")",
        ])
        return JSONReply.response(APIKeyReply(stored: key, now: now(), secret: secret), status: .created)
    }

    /// `POST /v1/keys/{name}/revoke`: revokes a ledger-stored key at once (every instance
    /// refuses it within ``ServerConfiguration/apiKeyCacheInterval``). Revoking it again
    /// changes nothing.
    @Sendable func revokeKey(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let name = try Self.pathParameter("name", context)
        guard !keys.configuredKeys.keys.contains(where: { $0.name == name }) else {
            throw APIError(
                .conflict, .apiKeyNotRevocable, "'\(name)' is configured by STOREGATE_API_KEYS or its file: remove it there and restart", field: "name"
            )
        }
        let revoked: StoredAPIKey?
        do throws(LedgerError) {
            revoked = try await ledger.revokeAPIKey(named: name, at: now())
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
        guard let revoked else {
            throw APIError(.notFound, .apiKeyNotFound, "no API key is named '\(name)'", field: "name")
        }
        keys.invalidate(digest: revoked.digest)
        context.logger.notice("an API key was revoked", metadata: ["key.name": "\(name)"])
        return JSONReply.response(APIKeyReply(stored: revoked, now: now()))
    }

    /// The API keys managed live.
    var keyRoutes: [Route] {
        [
            Route(.get, "/v1/keys", .apiKey(.keysManage), readKeys),
            Route(.post, "/v1/keys", .apiKey(.keysManage), createKey),
            Route(.post, "/v1/keys/:name/revoke", .apiKey(.keysManage), revokeKey),
        ]
    }
}

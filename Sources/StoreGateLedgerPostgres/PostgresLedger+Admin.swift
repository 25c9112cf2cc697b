public import Foundation
import Logging
import PostgresNIO
public import StoreGateLedger

/// Webhook endpoints and API keys managed live, in PostgreSQL (schema 13), shared by every
/// instance. A key is found by its digest through the unique index.
extension PostgresLedger {
    public func webhookEndpoints() async throws(LedgerError) -> [StoredWebhookEndpoint] {
        let logger = self.logger
        let rows = try await withConnection { connection in
            try await Self.rows(
                connection, "SELECT name, url, secrets, types, paused, source, revision, created_at, updated_at FROM ledger_webhook_endpoints ORDER BY name",
                logger: logger
            ).map { row in
                (
                    try row.text(0), try row.text(1), try row.text(2), try row.optionalText(3), try row.bool(4), try row.text(5), try row.integer(6),
                    try row.integer(7), try row.integer(8)
                )
            }
        }
        var endpoints: [StoredWebhookEndpoint] = []
        for (name, url, secrets, types, paused, source, revision, created, updated) in rows {
            endpoints.append(StoredWebhookEndpoint(
                name: name, url: url, secrets: try WebhookSecretsCodec.decode(secrets, endpoint: name, encryption: configuration.encryption),
                types: types.map { $0.split(separator: ",").map(String.init) }, isPaused: paused,
                source: StoredWebhookEndpoint.Source(rawValue: source) ?? .api, revision: revision,
                createdAt: Date(ledgerMilliseconds: created), updatedAt: Date(ledgerMilliseconds: updated)
            ))
        }
        return endpoints
    }

    public func createWebhookEndpoint(_ endpoint: StoredWebhookEndpoint) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkWebhookEndpoint(endpoint)
        let secrets = try WebhookSecretsCodec.encode(endpoint.secrets, endpoint: endpoint.name, encryption: configuration.encryption)
        let logger = self.logger
        // Placed at the end of the stream in the same statement (not when a deliverer first looks).
        return try await withConnection { connection in
            try await !Self.rows(
                connection,
                """
                WITH created AS (
                    INSERT INTO ledger_webhook_endpoints (name, url, secrets, types, paused, source, revision, created_at, updated_at)
                    VALUES ($1, $2, $3, $4, $5, $6, 1, $7, $8) ON CONFLICT (name) DO NOTHING RETURNING name
                )
                INSERT INTO ledger_webhook_cursors (endpoint, sequence)
                SELECT name, COALESCE((SELECT MAX(sequence) FROM ledger_events), 0) FROM created
                ON CONFLICT (endpoint) DO UPDATE SET sequence = excluded.sequence
                RETURNING endpoint
                """,
                [
                    .text(endpoint.name), .text(endpoint.url), .text(secrets), .optional(endpoint.types?.joined(separator: ",")), .bool(endpoint.isPaused),
                    .text(endpoint.source.rawValue), .integer(endpoint.createdAt.ledgerMilliseconds), .integer(endpoint.updatedAt.ledgerMilliseconds),
                ],
                logger: logger
            ).isEmpty
        }
    }

    public func updateWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, expectedRevision: Int64) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkWebhookEndpoint(endpoint)
        let secrets = try WebhookSecretsCodec.encode(endpoint.secrets, endpoint: endpoint.name, encryption: configuration.encryption)
        let logger = self.logger
        return try await withConnection { connection in
            try await !Self.rows(
                connection,
                """
                UPDATE ledger_webhook_endpoints SET url = $1, secrets = $2, types = $3, paused = $4, revision = revision + 1, updated_at = $5
                WHERE name = $6 AND revision = $7 RETURNING name
                """,
                [
                    .text(endpoint.url), .text(secrets), .optional(endpoint.types?.joined(separator: ",")), .bool(endpoint.isPaused),
                    .integer(endpoint.updatedAt.ledgerMilliseconds), .text(endpoint.name), .integer(expectedRevision),
                ],
                logger: logger
            ).isEmpty
        }
    }

    public func deleteWebhookEndpoint(named name: String, states: [String]) async throws(LedgerError) -> Bool {
        let logger = self.logger
        return try await transaction { connection -> Bool in
            guard try await !Self.rows(connection, "DELETE FROM ledger_webhook_endpoints WHERE name = $1 RETURNING name", [.text(name)], logger: logger).isEmpty else {
                return false
            }
            try await Self.clearLeftovers(name, states, connection, logger: logger)
            return true
        }
    }

    public func clearWebhookEndpointLeftovers(named name: String, states: [String]) async throws(LedgerError) {
        let logger = self.logger
        try await transaction { connection in
            guard try await Self.rows(connection, "SELECT 1 FROM ledger_webhook_endpoints WHERE name = $1", [.text(name)], logger: logger).isEmpty else { return }
            try await Self.clearLeftovers(name, states, connection, logger: logger)
        }
    }

    private static func clearLeftovers(_ name: String, _ states: [String], _ connection: PostgresConnection, logger: Logger) async throws {
        try await run(connection, "DELETE FROM ledger_webhook_cursors WHERE endpoint = $1", [.text(name)], logger: logger)
        try await run(connection, "DELETE FROM ledger_deliveries WHERE endpoint = $1", [.text(name)], logger: logger)
        if !states.isEmpty {
            try await run(connection, "DELETE FROM ledger_leased_states WHERE name = ANY($1::text[])", [.texts(states)], logger: logger)
        }
    }

    public func createAPIKey(_ key: StoredAPIKey) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkAPIKey(key)
        let logger = self.logger
        return try await withConnection { connection in
            try await !Self.rows(
                connection,
                """
                INSERT INTO ledger_api_keys (name, digest, permissions, created_at, created_by, expires_at, rate_requests, rate_seconds)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING RETURNING name
                """,
                [
                    .text(key.name), .bytes(key.digest), .text(key.permissions.joined(separator: " ")), .integer(key.createdAt.ledgerMilliseconds),
                    .text(key.createdBy), .optional(key.expiresAt?.ledgerMilliseconds), .optional(key.rateLimit?.requests), .optional(key.rateLimit?.seconds),
                ],
                logger: logger
            ).isEmpty
        }
    }

    public func apiKey(digest: [UInt8]) async throws(LedgerError) -> StoredAPIKey? {
        let logger = self.logger
        let rows = try await withConnection { connection in
            try await Self.rows(connection, "SELECT \(Self.apiKeyColumns) FROM ledger_api_keys WHERE digest = $1", [.bytes(digest)], logger: logger)
                .map(Self.apiKeyFields)
        }
        return try rows.first.map(Self.decodeAPIKey)
    }

    public func apiKeys() async throws(LedgerError) -> [StoredAPIKey] {
        let logger = self.logger
        let rows = try await withConnection { connection in
            try await Self.rows(connection, "SELECT \(Self.apiKeyColumns) FROM ledger_api_keys ORDER BY name", logger: logger).map(Self.apiKeyFields)
        }
        var keys: [StoredAPIKey] = []
        for row in rows { keys.append(try Self.decodeAPIKey(row)) }
        return keys
    }

    public func revokeAPIKey(named name: String, at date: Date) async throws(LedgerError) -> StoredAPIKey? {
        let logger = self.logger
        let rows = try await transaction { connection in
            try await Self.run(
                connection, "UPDATE ledger_api_keys SET revoked_at = $1 WHERE name = $2 AND revoked_at IS NULL", [.integer(date.ledgerMilliseconds), .text(name)],
                logger: logger
            )
            return try await Self.rows(connection, "SELECT \(Self.apiKeyColumns) FROM ledger_api_keys WHERE name = $1", [.text(name)], logger: logger)
                .map(Self.apiKeyFields)
        }
        return try rows.first.map(Self.decodeAPIKey)
    }

    public func recordAPIKeyUses(_ uses: [String: Date]) async throws(LedgerError) {
        guard !uses.isEmpty else { return }
        let sorted = uses.sorted { $0.key < $1.key }
        let logger = self.logger
        try await withConnection { connection in
            try await Self.run(
                connection,
                """
                UPDATE ledger_api_keys k SET last_used_at = u.at FROM unnest($1::text[], $2::bigint[]) AS u(name, at)
                WHERE k.name = u.name AND (k.last_used_at IS NULL OR k.last_used_at < u.at)
                """,
                [.texts(sorted.map(\.key)), .integers(sorted.map { $0.value.ledgerMilliseconds })], logger: logger
            )
        }
    }

    private static let apiKeyColumns = "name, digest, permissions, created_at, created_by, expires_at, revoked_at, last_used_at, rate_requests, rate_seconds"

    private struct APIKeyFields: Sendable {
        var name: String
        var digest: [UInt8]
        var permissions: String
        var createdAt: Int64
        var createdBy: String
        var expiresAt: Int64?
        var revokedAt: Int64?
        var lastUsedAt: Int64?
        var rateRequests: Int64?
        var rateSeconds: Int64?
    }

    private static func apiKeyFields(_ row: PostgresRandomAccessRow) throws -> APIKeyFields {
        APIKeyFields(
            name: try row.text(0), digest: try row.bytes(1), permissions: try row.text(2), createdAt: try row.integer(3), createdBy: try row.text(4),
            expiresAt: try row.optionalInteger(5), revokedAt: try row.optionalInteger(6), lastUsedAt: try row.optionalInteger(7),
            rateRequests: try row.optionalInteger(8), rateSeconds: try row.optionalInteger(9)
        )
    }

    private static func decodeAPIKey(_ fields: APIKeyFields) throws(LedgerError) -> StoredAPIKey {
        var rateLimit: APIKeyRateLimit?
        if let requests = fields.rateRequests, let seconds = fields.rateSeconds {
            do throws(LedgerError) {
                rateLimit = try APIKeyRateLimit(requests: Int(requests), seconds: Int(seconds))
            } catch {
                throw LedgerError(.corruptState, reason: "API key '\(fields.name)': its stored rate limit is out of range")
            }
        }
        return StoredAPIKey(
            name: fields.name, digest: fields.digest, permissions: fields.permissions.split(separator: " ").map(String.init),
            createdAt: Date(ledgerMilliseconds: fields.createdAt), createdBy: fields.createdBy, expiresAt: fields.expiresAt.map(Date.init(ledgerMilliseconds:)),
            revokedAt: fields.revokedAt.map(Date.init(ledgerMilliseconds:)), lastUsedAt: fields.lastUsedAt.map(Date.init(ledgerMilliseconds:)),
            rateLimit: rateLimit
        )
    }
}

public import Foundation
public import StoreGateLedger

/// Webhook endpoints and API keys managed live, in the SQLite file (schema 13).
extension SQLiteLedger {
    public func webhookEndpoints() async throws(LedgerError) -> [StoredWebhookEndpoint] {
        let encryption = configuration.encryption
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                var endpoints: [StoredWebhookEndpoint] = []
                try connection.query(
                    "SELECT name, url, secrets, types, paused, source, revision, created_at, updated_at FROM ledger_webhook_endpoints ORDER BY name"
                ) { row throws(LedgerError) in
                    let name = row.text(0)
                    endpoints.append(StoredWebhookEndpoint(
                        name: name, url: row.text(1),
                        secrets: try WebhookSecretsCodec.decode(row.text(2), endpoint: name, encryption: encryption),
                        types: row.optionalText(3).map { $0.split(separator: ",").map(String.init) }, isPaused: row.integer(4) != 0,
                        source: StoredWebhookEndpoint.Source(rawValue: row.text(5)) ?? .api, revision: row.integer(6),
                        createdAt: Date(ledgerMilliseconds: row.integer(7)), updatedAt: Date(ledgerMilliseconds: row.integer(8))
                    ))
                }
                return endpoints
            }
        }
    }

    public func createWebhookEndpoint(_ endpoint: StoredWebhookEndpoint) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkWebhookEndpoint(endpoint)
        let secrets = try WebhookSecretsCodec.encode(endpoint.secrets, endpoint: endpoint.name, encryption: configuration.encryption)
        return try await write { connection throws(LedgerError) -> Bool in
            let created = try connection.run(
                """
                INSERT INTO ledger_webhook_endpoints (name, url, secrets, types, paused, source, revision, created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT (name) DO NOTHING
                """,
                [
                    .text(endpoint.name), .text(endpoint.url), .text(secrets), .optional(endpoint.types?.joined(separator: ",")),
                    .integer(endpoint.isPaused ? 1 : 0), .text(endpoint.source.rawValue), .integer(endpoint.createdAt.ledgerMilliseconds),
                    .integer(endpoint.updatedAt.ledgerMilliseconds),
                ]
            ) == 1
            guard created else { return false }
            // Its place: the end of the stream now (not when a deliverer first looks). `WHERE
            // true` tells SQLite's parser the SELECT ends before ON CONFLICT.
            try connection.run(
                """
                INSERT INTO ledger_webhook_cursors (endpoint, sequence) SELECT ?, COALESCE(MAX(sequence), 0) FROM ledger_events WHERE true
                ON CONFLICT (endpoint) DO UPDATE SET sequence = excluded.sequence
                """, [.text(endpoint.name)])
            return true
        }
    }

    public func updateWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, expectedRevision: Int64) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkWebhookEndpoint(endpoint)
        let secrets = try WebhookSecretsCodec.encode(endpoint.secrets, endpoint: endpoint.name, encryption: configuration.encryption)
        return try await write { connection throws(LedgerError) -> Bool in
            try connection.run(
                """
                UPDATE ledger_webhook_endpoints SET url = ?, secrets = ?, types = ?, paused = ?, revision = revision + 1, updated_at = ?
                WHERE name = ? AND revision = ?
                """,
                [
                    .text(endpoint.url), .text(secrets), .optional(endpoint.types?.joined(separator: ",")), .integer(endpoint.isPaused ? 1 : 0),
                    .integer(endpoint.updatedAt.ledgerMilliseconds), .text(endpoint.name), .integer(expectedRevision),
                ]
            ) == 1
        }
    }

    public func deleteWebhookEndpoint(named name: String, states: [String]) async throws(LedgerError) -> Bool {
        try await write { connection throws(LedgerError) -> Bool in
            guard try connection.run("DELETE FROM ledger_webhook_endpoints WHERE name = ?", [.text(name)]) == 1 else { return false }
            try Self.clearLeftovers(name, states, connection)
            return true
        }
    }

    public func clearWebhookEndpointLeftovers(named name: String, states: [String]) async throws(LedgerError) {
        try await write { connection throws(LedgerError) in
            var exists = false
            try connection.query("SELECT 1 FROM ledger_webhook_endpoints WHERE name = ?", [.text(name)]) { _ throws(LedgerError) in exists = true }
            guard !exists else { return }
            try Self.clearLeftovers(name, states, connection)
        }
    }

    private static func clearLeftovers(_ name: String, _ states: [String], _ connection: SQLiteConnection) throws(LedgerError) {
        try connection.run("DELETE FROM ledger_webhook_cursors WHERE endpoint = ?", [.text(name)])
        try connection.run("DELETE FROM ledger_deliveries WHERE endpoint = ?", [.text(name)])
        for state in states {
            try connection.run("DELETE FROM ledger_leased_states WHERE name = ?", [.text(state)])
        }
    }

    public func createAPIKey(_ key: StoredAPIKey) async throws(LedgerError) -> Bool {
        try LedgerPlanner.checkAPIKey(key)
        return try await write { connection throws(LedgerError) -> Bool in
            try connection.run(
                """
                INSERT INTO ledger_api_keys (name, digest, permissions, created_at, created_by, expires_at, rate_requests, rate_seconds)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING
                """,
                [
                    .text(key.name), .blob(key.digest), .text(key.permissions.joined(separator: " ")), .integer(key.createdAt.ledgerMilliseconds),
                    .text(key.createdBy), .optional(key.expiresAt?.ledgerMilliseconds), .optional(key.rateLimit?.requests),
                    .optional(key.rateLimit?.seconds),
                ]
            ) == 1
        }
    }

    public func apiKey(digest: [UInt8]) async throws(LedgerError) -> StoredAPIKey? {
        try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                var found: StoredAPIKey?
                try connection.query("SELECT \(Self.apiKeyColumns) FROM ledger_api_keys WHERE digest = ?", [.blob(digest)]) { row throws(LedgerError) in
                    found = try Self.decodeAPIKey(row)
                }
                return found
            }
        }
    }

    public func apiKeys() async throws(LedgerError) -> [StoredAPIKey] {
        try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                var keys: [StoredAPIKey] = []
                try connection.query("SELECT \(Self.apiKeyColumns) FROM ledger_api_keys ORDER BY name") { row throws(LedgerError) in
                    keys.append(try Self.decodeAPIKey(row))
                }
                return keys
            }
        }
    }

    public func revokeAPIKey(named name: String, at date: Date) async throws(LedgerError) -> StoredAPIKey? {
        try await write { connection throws(LedgerError) -> StoredAPIKey? in
            try connection.run("UPDATE ledger_api_keys SET revoked_at = ? WHERE name = ? AND revoked_at IS NULL", [.integer(date.ledgerMilliseconds), .text(name)])
            var found: StoredAPIKey?
            try connection.query("SELECT \(Self.apiKeyColumns) FROM ledger_api_keys WHERE name = ?", [.text(name)]) { row throws(LedgerError) in
                found = try Self.decodeAPIKey(row)
            }
            return found
        }
    }

    public func recordAPIKeyUses(_ uses: [String: Date]) async throws(LedgerError) {
        guard !uses.isEmpty else { return }
        try await write { connection throws(LedgerError) in
            for (name, date) in uses.sorted(by: { $0.key < $1.key }) {
                try connection.run(
                    "UPDATE ledger_api_keys SET last_used_at = ?1 WHERE name = ?2 AND (last_used_at IS NULL OR last_used_at < ?1)",
                    [.integer(date.ledgerMilliseconds), .text(name)]
                )
            }
        }
    }

    private static let apiKeyColumns = "name, digest, permissions, created_at, created_by, expires_at, revoked_at, last_used_at, rate_requests, rate_seconds"

    private static func decodeAPIKey(_ row: SQLiteRow) throws(LedgerError) -> StoredAPIKey {
        var rateLimit: APIKeyRateLimit?
        if let requests = row.optionalInteger(8), let seconds = row.optionalInteger(9) {
            do throws(LedgerError) {
                rateLimit = try APIKeyRateLimit(requests: Int(requests), seconds: Int(seconds))
            } catch {
                throw LedgerError(.corruptState, reason: "API key '\(row.text(0))': its stored rate limit is out of range")
            }
        }
        return StoredAPIKey(
            name: row.text(0), digest: row.blob(1), permissions: row.text(2).split(separator: " ").map(String.init),
            createdAt: Date(ledgerMilliseconds: row.integer(3)), createdBy: row.text(4), expiresAt: row.optionalInteger(5).map(Date.init(ledgerMilliseconds:)),
            revokedAt: row.optionalInteger(6).map(Date.init(ledgerMilliseconds:)), lastUsedAt: row.optionalInteger(7).map(Date.init(ledgerMilliseconds:)),
            rateLimit: rateLimit
        )
    }
}

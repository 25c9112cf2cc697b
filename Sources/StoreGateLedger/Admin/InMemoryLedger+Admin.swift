public import Foundation

/// Webhook endpoints and API keys in memory (the contract of schema 13).
extension InMemoryLedger {
    public func webhookEndpoints() async throws(LedgerError) -> [StoredWebhookEndpoint] {
        try checkOpen()
        return webhookEndpointRows.values.sorted { $0.name < $1.name }
    }

    public func createWebhookEndpoint(_ endpoint: StoredWebhookEndpoint) async throws(LedgerError) -> Bool {
        try checkOpen()
        try LedgerPlanner.checkWebhookEndpoint(endpoint)
        guard webhookEndpointRows[endpoint.name] == nil else { return false }
        var stored = endpoint
        stored.revision = 1
        stored.createdAt = endpoint.createdAt.ledgerNormalized
        stored.updatedAt = endpoint.updatedAt.ledgerNormalized
        webhookEndpointRows[endpoint.name] = stored
        // It receives the events recorded after it was added: its place is the end of the
        // stream now, not when a deliverer first looks.
        deliveryCursors[endpoint.name] = newestSequence
        return true
    }

    public func updateWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, expectedRevision: Int64) async throws(LedgerError) -> Bool {
        try checkOpen()
        try LedgerPlanner.checkWebhookEndpoint(endpoint)
        guard var stored = webhookEndpointRows[endpoint.name], stored.revision == expectedRevision else { return false }
        stored.url = endpoint.url
        stored.secrets = endpoint.secrets
        stored.types = endpoint.types
        stored.isPaused = endpoint.isPaused
        stored.revision = expectedRevision + 1
        stored.updatedAt = endpoint.updatedAt.ledgerNormalized
        webhookEndpointRows[endpoint.name] = stored
        return true
    }

    public func deleteWebhookEndpoint(named name: String, states: [String]) async throws(LedgerError) -> Bool {
        try checkOpen()
        guard webhookEndpointRows.removeValue(forKey: name) != nil else { return false }
        clearLeftovers(name, states)
        return true
    }

    public func clearWebhookEndpointLeftovers(named name: String, states: [String]) async throws(LedgerError) {
        try checkOpen()
        guard webhookEndpointRows[name] == nil else { return }
        clearLeftovers(name, states)
    }

    private func clearLeftovers(_ name: String, _ states: [String]) {
        deliveryCursors[name] = nil
        deliveryRows[name] = nil
        for state in states { leasedStates[state] = nil }
    }

    public func createAPIKey(_ key: StoredAPIKey) async throws(LedgerError) -> Bool {
        try checkOpen()
        try LedgerPlanner.checkAPIKey(key)
        guard apiKeyRows[key.name] == nil, !apiKeyRows.values.contains(where: { $0.digest == key.digest }) else { return false }
        var stored = key
        stored.createdAt = key.createdAt.ledgerNormalized
        stored.expiresAt = key.expiresAt?.ledgerNormalized
        stored.revokedAt = nil
        stored.lastUsedAt = nil
        apiKeyRows[key.name] = stored
        return true
    }

    public func apiKey(digest: [UInt8]) async throws(LedgerError) -> StoredAPIKey? {
        try checkOpen()
        return apiKeyRows.values.first { $0.digest == digest }
    }

    public func apiKeys() async throws(LedgerError) -> [StoredAPIKey] {
        try checkOpen()
        return apiKeyRows.values.sorted { $0.name < $1.name }
    }

    public func revokeAPIKey(named name: String, at date: Date) async throws(LedgerError) -> StoredAPIKey? {
        try checkOpen()
        guard var key = apiKeyRows[name] else { return nil }
        if key.revokedAt == nil {
            key.revokedAt = date.ledgerNormalized
            apiKeyRows[name] = key
        }
        return key
    }

    public func recordAPIKeyUses(_ uses: [String: Date]) async throws(LedgerError) {
        try checkOpen()
        for (name, date) in uses {
            guard var key = apiKeyRows[name] else { continue }
            let date = date.ledgerNormalized
            if key.lastUsedAt.map({ $0 < date }) ?? true {
                key.lastUsedAt = date
                apiKeyRows[name] = key
            }
        }
    }
}

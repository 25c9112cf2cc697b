public import Foundation

/// The webhook endpoints kept in the ledger (schema 13), shared by every instance.
public protocol WebhookEndpointStore: Sendable {
    /// Every stored endpoint, by name.
    ///
    /// - Throws: ``LedgerError/Code/unknownEncryptionKey`` or ``LedgerError/Code/decryptionFailed``
    ///   when sealed secrets cannot be opened, or a storage error.
    func webhookEndpoints() async throws(LedgerError) -> [StoredWebhookEndpoint]

    /// Stores a new endpoint (its revision 1), placed at the end of the event stream in the
    /// same transaction: it receives exactly the events recorded after it was added, however
    /// late a deliverer first looks at it.
    ///
    /// - Returns: `false` when an endpoint of that name exists (nothing changes): seeding from
    ///   the configuration is idempotent.
    /// - Throws: ``LedgerError/Code/invalidArgument`` for a field out of bounds, or a storage error.
    func createWebhookEndpoint(_ endpoint: StoredWebhookEndpoint) async throws(LedgerError) -> Bool

    /// Replaces an endpoint's URL, secrets, types and paused flag, and moves its revision to
    /// `expectedRevision + 1` — only if its revision is still `expectedRevision`.
    ///
    /// - Returns: `false` when it changed meanwhile or no longer exists.
    func updateWebhookEndpoint(_ endpoint: StoredWebhookEndpoint, expectedRevision: Int64) async throws(LedgerError) -> Bool

    /// Deletes an endpoint, in one transaction with its cursor and every delivery of it (so it
    /// no longer holds event retention back) and the leased states named `states` (its
    /// disabled record).
    ///
    /// - Returns: Whether it existed.
    func deleteWebhookEndpoint(named name: String, states: [String]) async throws(LedgerError) -> Bool

    /// Deletes the cursor, deliveries and `states` of an endpoint name that is *not* stored
    /// (what a deliverer that had not yet seen the deletion left behind); nothing when it is.
    func clearWebhookEndpointLeftovers(named name: String, states: [String]) async throws(LedgerError)
}

/// The API keys kept in the ledger (schema 13), shared by every instance: looked up by the
/// digest of the presented secret through an index.
public protocol APIKeyRecordStore: Sendable {
    /// Stores a new key.
    ///
    /// - Returns: `false` when a key of that name (or, astronomically unlikely, digest) exists.
    /// - Throws: ``LedgerError/Code/invalidArgument`` for a field out of bounds, or a storage error.
    func createAPIKey(_ key: StoredAPIKey) async throws(LedgerError) -> Bool

    /// The key whose secret has this SHA-256 digest (revoked and expired ones too), or `nil`.
    func apiKey(digest: [UInt8]) async throws(LedgerError) -> StoredAPIKey?

    /// Every stored key, by name.
    func apiKeys() async throws(LedgerError) -> [StoredAPIKey]

    /// Revokes a key at `date` (a key revoked before keeps its first revocation time).
    ///
    /// - Returns: The key as stored afterwards, or `nil` when there is none of that name.
    func revokeAPIKey(named name: String, at date: Date) async throws(LedgerError) -> StoredAPIKey?

    /// Records uses of keys: each key's last use moves to the given time when it is later.
    func recordAPIKeyUses(_ uses: [String: Date]) async throws(LedgerError)
}

extension LedgerPlanner {
    /// Checks a record's name: 1...64 of `A-Z a-z 0-9 . _ -`.
    package static func checkAdminName(_ name: String, _ what: String) throws(LedgerError) {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }) else {
            throw LedgerError(.invalidArgument, reason: "\(what) name has 1...64 characters from A-Z a-z 0-9 . _ -")
        }
    }

    /// Checks a webhook endpoint's fields against the stored bounds.
    package static func checkWebhookEndpoint(_ endpoint: StoredWebhookEndpoint) throws(LedgerError) {
        try checkAdminName(endpoint.name, "a webhook endpoint")
        guard (1...2048).contains(endpoint.url.utf8.count) else {
            throw LedgerError(.invalidArgument, reason: "a webhook URL has 1...2048 bytes")
        }
        guard (1...StoredWebhookEndpoint.maximumSecrets).contains(endpoint.secrets.count),
              endpoint.secrets.allSatisfy({ (16...512).contains($0.utf8.count) })
        else {
            throw LedgerError(.invalidArgument, reason: "a webhook endpoint has 1...\(StoredWebhookEndpoint.maximumSecrets) secrets of 16...512 bytes")
        }
        if let types = endpoint.types {
            guard (1...100).contains(types.count), types.allSatisfy({ (1...64).contains($0.utf8.count) && !$0.contains(",") }) else {
                throw LedgerError(.invalidArgument, reason: "a type filter has 1...100 types of 1...64 bytes")
            }
        }
    }

    /// Checks an API key's fields against the stored bounds.
    package static func checkAPIKey(_ key: StoredAPIKey) throws(LedgerError) {
        try checkAdminName(key.name, "an API key")
        guard key.digest.count == 32 else {
            throw LedgerError(.invalidArgument, reason: "an API key digest has 32 bytes")
        }
        guard key.permissions.allSatisfy({ (1...64).contains($0.utf8.count) && !$0.contains(" ") }), (1...256).contains(key.createdBy.utf8.count) else {
            throw LedgerError(.invalidArgument, reason: "an API key's permissions and creator are 1...64 and 1...256 bytes")
        }
    }
}

/// How a webhook endpoint's secrets are kept in a text column: `plain:` + a JSON array, or,
/// with an encryption key, `sealed:` + the key id + `:` + base64 of AES-GCM over the JSON,
/// bound to the endpoint's name.
package enum WebhookSecretsCodec {
    package static func encode(_ secrets: [String], endpoint: String, encryption: ProofEncryption?) throws(LedgerError) -> String {
        let json: [UInt8]
        do {
            json = Array(try JSONEncoder().encode(secrets))
        } catch {
            throw LedgerError(.invalidArgument, reason: "the secrets do not encode")
        }
        guard let encryption else { return "plain:" + String(decoding: json, as: UTF8.self) }
        let sealed = try encryption.sealSecret(json, context: "webhook-endpoint:\(endpoint)")
        return "sealed:\(sealed.keyID):" + Data(sealed.combined).base64EncodedString()
    }

    package static func decode(_ text: String, endpoint: String, encryption: ProofEncryption?) throws(LedgerError) -> [String] {
        let json: [UInt8]
        if text.hasPrefix("plain:") {
            json = Array(text.utf8.dropFirst(6))
        } else if text.hasPrefix("sealed:") {
            let parts = text.dropFirst(7).split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let combined = Data(base64Encoded: String(parts[1])) else {
                throw LedgerError(.corruptState, reason: "webhook endpoint '\(endpoint)': its stored secrets are not in a known form")
            }
            guard let encryption else {
                throw LedgerError(.unknownEncryptionKey, reason: "webhook endpoint '\(endpoint)': its secrets are sealed and no encryption key is configured")
            }
            json = try encryption.openSecret(SealedProof(keyID: String(parts[0]), combined: Array(combined)), context: "webhook-endpoint:\(endpoint)")
        } else {
            throw LedgerError(.corruptState, reason: "webhook endpoint '\(endpoint)': its stored secrets are not in a known form")
        }
        do {
            return try JSONDecoder().decode([String].self, from: Data(json))
        } catch {
            throw LedgerError(.corruptState, reason: "webhook endpoint '\(endpoint)': its stored secrets do not decode")
        }
    }
}

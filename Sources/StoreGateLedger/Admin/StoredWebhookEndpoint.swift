public import Foundation

/// A webhook endpoint as the ledger keeps it (schema 13): shared by every instance, created
/// and changed through the API (`/v1/webhooks/endpoints`) or seeded from the configuration.
///
/// The signing secrets are sealed at rest with the ledger's encryption key when one is
/// configured (``LedgerConfiguration/encryption``); they are never part of a description.
public struct StoredWebhookEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Where the endpoint came from.
    public enum Source: String, Sendable, Hashable, CaseIterable {
        /// Created through the API.
        case api
        /// Seeded from the configuration (`STOREGATE_WEBHOOKS_FILE`).
        case configuration
    }

    /// The name: 1...64 of `A-Z a-z 0-9 . _ -`.
    public var name: String
    /// The receiver's URL.
    public var url: String
    /// The URL without its query and fragment (`?…` in their place): what replies and pages
    /// show, since a receiver's token often travels in the query.
    public var redactedURL: String {
        guard let cut = url.firstIndex(where: { $0 == "?" || $0 == "#" }) else { return url }
        return String(url[..<cut]) + "?…"
    }
    /// The signing secrets (every one signs every delivery), 1...``maximumSecrets``.
    public var secrets: [String]
    /// The event types sent, sorted; `nil` sends every type.
    public var types: [String]?
    /// Whether deliveries wait (an operator paused it; events still become pending deliveries).
    public var isPaused: Bool
    /// Where it came from.
    public var source: Source
    /// Counts the changes: 1 when created, one more with each update (optimistic concurrency).
    public var revision: Int64
    /// When it was created.
    public var createdAt: Date
    /// When it last changed.
    public var updatedAt: Date

    /// The most secrets an endpoint keeps (rotation keeps the old ones beside the new).
    public static let maximumSecrets = 5

    /// Creates a record.
    public init(
        name: String, url: String, secrets: [String], types: [String]?, isPaused: Bool = false, source: Source = .api, revision: Int64 = 1,
        createdAt: Date, updatedAt: Date
    ) {
        self.name = name
        self.url = url
        self.secrets = secrets
        self.types = types?.sorted()
        self.isPaused = isPaused
        self.source = source
        self.revision = revision
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Everything but the secrets (their count only).
    public var description: String {
        "StoredWebhookEndpoint(\(name), \(url), \(secrets.count) secret(s) redacted, types: \(types?.joined(separator: ",") ?? "*"), paused: \(isPaused), revision \(revision))"
    }
}

import Foundation
public import StoreGateLedger

/// One webhook endpoint: where the ledger's events are sent, signed with each of its secrets.
public struct WebhookEndpoint: Sendable, Hashable {
    /// A name for logs, metrics and the deliveries API: 1...64 of `A-Z a-z 0-9 . _ -`.
    public var name: String
    /// An `https` URL (or `http`, for a receiver on the same host or network).
    public var url: String
    /// The signing secrets, each at least 16 bytes, never logged: every one signs every
    /// delivery, in both schemes (`StoreGate-Signature` and the Standard Webhooks headers),
    /// so a secret is rotated without downtime by adding the new one before removing the old.
    public var secrets: [WebhookSecret]
    /// The event types sent; `nil` sends every type.
    public var types: Set<String>?
    /// Whether deliveries wait (an operator paused the endpoint): events still become pending
    /// deliveries, and go once it is resumed.
    public var isPaused: Bool = false

    /// Validates an endpoint.
    ///
    /// - Parameters:
    ///   - secrets: One or more distinct secrets (see ``WebhookSecret``).
    /// - Throws: ``WebhookConfigurationError`` naming what is wrong.
    public init(name: String, url: String, secrets: [String], types: Set<String>? = nil) throws(WebhookConfigurationError) {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }) else {
            throw WebhookConfigurationError("a webhook endpoint name has 1...64 characters from A-Z a-z 0-9 . _ -")
        }
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), ["https", "http"].contains(scheme),
              let host = parsed.host, !host.isEmpty, parsed.user == nil, parsed.password == nil
        else {
            throw WebhookConfigurationError("webhook endpoint '\(name)': the URL must be http(s)://host/… without credentials")
        }
        guard !secrets.isEmpty else {
            throw WebhookConfigurationError("webhook endpoint '\(name)': it needs at least one secret")
        }
        guard Set(secrets).count == secrets.count else {
            throw WebhookConfigurationError("webhook endpoint '\(name)': the same secret is listed twice")
        }
        var parsedSecrets: [WebhookSecret] = []
        for secret in secrets {
            do throws(WebhookConfigurationError) {
                parsedSecrets.append(try WebhookSecret(secret))
            } catch {
                throw WebhookConfigurationError("webhook endpoint '\(name)': the secret has at least \(WebhookSecret.minimumLength) bytes")
            }
        }
        if let types, types.isEmpty {
            throw WebhookConfigurationError("webhook endpoint '\(name)': an empty type filter would send nothing (leave it out to send every type)")
        }
        self.name = name
        self.url = url
        self.secrets = parsedSecrets
        self.types = types
    }

    /// Validates an endpoint with one secret.
    ///
    /// - Throws: ``WebhookConfigurationError`` naming what is wrong.
    public init(name: String, url: String, secret: String, types: Set<String>? = nil) throws(WebhookConfigurationError) {
        try self.init(name: name, url: url, secrets: [secret], types: types)
    }
}

extension WebhookEndpoint {
    /// The endpoint a ledger record describes.
    ///
    /// - Throws: ``WebhookConfigurationError`` when its fields no longer validate.
    public init(_ stored: StoredWebhookEndpoint) throws(WebhookConfigurationError) {
        try self.init(name: stored.name, url: stored.url, secrets: stored.secrets, types: stored.types.map(Set.init))
        isPaused = stored.isPaused
    }

    /// Whether deliveries go over plain HTTP to a host other than this one.
    public var sendsInClearOffHost: Bool {
        guard let parsed = URL(string: url), parsed.scheme?.lowercased() == "http" else { return false }
        return !["127.0.0.1", "localhost", "::1", "[::1]"].contains(parsed.host?.lowercased() ?? "")
    }

    /// What an operator should know about the secrets (start-up warnings): a `whsec_` secret
    /// that is not base64 (a plain secret for Standard Webhooks receivers), a Standard Webhooks
    /// key shorter than the specification's 24 bytes. Never holds a secret.
    public var secretWarnings: [String] {
        var warnings: [String] = []
        for (index, secret) in secrets.enumerated() {
            let which = secrets.count == 1 ? "its secret" : "secret \(index + 1)"
            if secret.looksStandardButIsPlain {
                warnings.append(
                    "webhook endpoint '\(name)': \(which) starts with whsec_ but is not base64 after it, so it is a plain secret: Standard Webhooks receivers configure whsec_ + base64 of the whole text (storegate webhook secret --receiver-form prints it)"
                )
            } else if secret.form == .standard, secret.standardKey.count < WebhookSecret.recommendedKeyLength {
                warnings.append(
                    "webhook endpoint '\(name)': \(which) is a Standard Webhooks key of \(secret.standardKey.count) bytes; the specification asks for \(WebhookSecret.recommendedKeyLength) to 64 random bytes (storegate webhook secret makes one)"
                )
            }
        }
        return warnings
    }
}

/// A webhook setting that cannot be used.
public struct WebhookConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

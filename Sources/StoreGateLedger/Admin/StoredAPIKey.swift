public import Foundation

/// An API key as the ledger keeps it (schema 13): its name, the SHA-256 digest of its secret
/// (the secret itself is never stored, so it cannot be recovered), its permissions, its
/// optional expiry and rate limit, and when it was last used.
public struct StoredAPIKey: Sendable, Hashable {
    /// The name (logged and shown instead of the key): 1...64 of `A-Z a-z 0-9 . _ -`.
    public var name: String
    /// SHA-256 of the secret, 32 bytes.
    public var digest: [UInt8]
    /// The permissions' names (`receipts.verify`, …), sorted.
    public var permissions: [String]
    /// When it was created.
    public var createdAt: Date
    /// Who created it (the creating key's name).
    public var createdBy: String
    /// When it stops working, if ever.
    public var expiresAt: Date?
    /// When it was revoked (it is refused from then on, on every instance).
    public var revokedAt: Date?
    /// When it was last used, at a granularity of about a minute (uses are recorded at most
    /// once a minute per key and instance).
    public var lastUsedAt: Date?
    /// Its own request rate limit; `nil` takes the service's default.
    public var rateLimit: APIKeyRateLimit?

    /// Creates a record.
    public init(
        name: String, digest: [UInt8], permissions: [String], createdAt: Date, createdBy: String, expiresAt: Date? = nil, revokedAt: Date? = nil,
        lastUsedAt: Date? = nil, rateLimit: APIKeyRateLimit? = nil
    ) {
        self.name = name
        self.digest = digest
        self.permissions = permissions.sorted()
        self.createdAt = createdAt
        self.createdBy = createdBy
        self.expiresAt = expiresAt
        self.revokedAt = revokedAt
        self.lastUsedAt = lastUsedAt
        self.rateLimit = rateLimit
    }

    /// Whether the key is accepted at `date`: not revoked, not expired.
    public func isUsable(at date: Date) -> Bool {
        revokedAt == nil && (expiresAt.map { date < $0 } ?? true)
    }
}

/// A request rate limit: a token bucket of ``requests`` tokens refilled over ``seconds``
/// (`100` per `1` second: bursts up to 100, 100 a second sustained).
public struct APIKeyRateLimit: Sendable, Hashable, CustomStringConvertible {
    /// The bucket's size, and how many requests each ``seconds`` refill: 1...1000000.
    public var requests: Int
    /// The refill period in seconds: 1...86400.
    public var seconds: Int

    /// Creates a limit.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` when a part is out of range.
    public init(requests: Int, seconds: Int) throws(LedgerError) {
        guard (1...1_000_000).contains(requests), (1...86_400).contains(seconds) else {
            throw LedgerError(.invalidArgument, reason: "a rate limit is 1...1000000 requests per 1...86400 seconds")
        }
        self.requests = requests
        self.seconds = seconds
    }

    /// Reads `requests/seconds` (`100/1`, `6000/60`).
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` for any other text.
    public init(text: String) throws(LedgerError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let requests = Int(parts[0]), let seconds = Int(parts[1]) else {
            throw LedgerError(.invalidArgument, reason: "a rate limit is written requests/seconds, such as 100/1")
        }
        try self.init(requests: requests, seconds: seconds)
    }

    /// `requests/seconds`.
    public var description: String { "\(requests)/\(seconds)" }
}

import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import StoreGateLedger
import Synchronization

/// Who presented a valid API key: its name, what it may call and its rate limit.
struct APICaller: Sendable, Hashable {
    /// The key's name (logged, never the key).
    let name: String
    /// What it may call.
    let permissions: Set<Permission>
    /// Its rate limit (its own, or the service's default); `nil`: unlimited.
    let rateLimit: APIKeyRateLimit?
    /// Whether the key is stored in the ledger (managed live) rather than configured.
    let isStored: Bool
}

/// Authenticates bearer API keys from both sources, and keeps each key's request rate.
///
/// 1. Keys configured by `STOREGATE_API_KEYS` / `STOREGATE_API_KEYS_FILE` (``APIKeyStore``):
///    compared by digest, all of them, in constant time.
/// 2. Keys managed live in the ledger (``APIKeyRecordStore``): looked up by the SHA-256 of
///    the presented key through the ledger's unique index. What was read is trusted for
///    ``ServerConfiguration/apiKeyCacheInterval`` (1 s), so a key revoked on any instance is
///    refused by every instance within that time, and a busy key costs one indexed read a
///    second per instance, not one per request. Timing reveals nothing of the key: the lookup
///    is by its digest, and a digest's preimage cannot be found.
///
/// A stored key's use is written to the ledger at most once per
/// ``ServerConfiguration/apiKeyUsageInterval`` (a minute) per key and instance, so its last
/// use is listed without turning every request into a write.
///
/// Rate limits are a token bucket per key and instance: `requests` tokens, refilled at
/// `requests / seconds` a second; a request finding the bucket empty is answered 429 with
/// `Retry-After` (whole seconds until a token is back).
final class APIKeyAuthenticator: Sendable {
    private let configured: APIKeyStore
    private let store: any APIKeyRecordStore
    private let defaultRateLimit: APIKeyRateLimit?
    private let cacheInterval: Duration
    private let usageInterval: Duration
    private let now: @Sendable () -> Date
    private let logger: Logger
    private let cache = Mutex<[SHA256Digest: (key: StoredAPIKey?, readAt: ContinuousClock.Instant)]>([:])
    private let usesWritten = Mutex<[String: ContinuousClock.Instant]>([:])
    private let buckets = Mutex<[String: TokenBucket]>([:])

    /// The most cached lookups kept; past it the cache starts again (keys sprayed by a client
    /// must not grow memory).
    private static let cacheLimit = 10_000

    init(configuration: ServerConfiguration, store: any APIKeyRecordStore, now: @escaping @Sendable () -> Date, logger: Logger) {
        configured = configuration.apiKeys
        self.store = store
        defaultRateLimit = configuration.apiKeyRateLimit
        cacheInterval = configuration.apiKeyCacheInterval
        usageInterval = configuration.apiKeyUsageInterval
        self.now = now
        self.logger = logger
    }

    /// The configured keys.
    var configuredKeys: APIKeyStore { configured }

    /// The caller the request's `Authorization: Bearer …` header presents.
    ///
    /// - Throws: 401 ``APIError`` when the header is absent, not a bearer token, unknown,
    ///   revoked or expired; 503 when the ledger cannot be read (fail closed).
    func authenticate(_ request: Request) async throws(APIError) -> APICaller {
        guard let header = request.headers[.authorization] else {
            throw APIError.unauthorized("this endpoint needs an API key: send Authorization: Bearer <key>")
        }
        guard let token = APIKeyMiddleware.bearerToken(header) else {
            throw APIError.unauthorized("the Authorization header is not 'Bearer <key>'")
        }
        return try await authenticate(token: token)
    }

    /// The caller `token` identifies.
    func authenticate(token: some StringProtocol) async throws(APIError) -> APICaller {
        if let key = configured.match(token) {
            return APICaller(name: key.name, permissions: key.permissions, rateLimit: defaultRateLimit, isStored: false)
        }
        let digest = SHA256.hash(data: Array(token.utf8))
        let stored = try await lookUp(digest)
        guard let stored, stored.isUsable(at: now()) else {
            throw APIError.unauthorized("the API key is not valid")
        }
        await recordUse(of: stored.name)
        return APICaller(
            name: stored.name, permissions: Set(stored.permissions.compactMap(Permission.init(rawValue:))),
            rateLimit: stored.rateLimit ?? defaultRateLimit, isStored: true
        )
    }

    /// Takes one token from the caller's bucket.
    ///
    /// - Throws: 429 ``APIError`` (`too_many_requests`) with `Retry-After` when it is empty.
    func checkRate(_ caller: APICaller) throws(APIError) {
        guard let limit = caller.rateLimit else { return }
        let instant = ContinuousClock.now
        let wait = buckets.withLock { buckets -> Double? in
            var bucket = buckets[caller.name] ?? TokenBucket(limit: limit, at: instant)
            defer { buckets[caller.name] = bucket }
            return bucket.take(limit: limit, at: instant)
        }
        guard let wait else { return }
        var error = APIError(
            .tooManyRequests, .tooManyRequests, "this API key sent more than \(limit.requests) requests in \(limit.seconds) s; retry after the Retry-After seconds"
        )
        error.isRetryable = true
        error.headers[.retryAfter] = String(max(1, Int(wait.rounded(.up))))
        throw error
    }

    /// Forgets what was read of a stored key, so this instance sees a change at once.
    func invalidate(digest: [UInt8]) {
        cache.withLock { cache in
            for key in cache.keys where Array(key) == digest { cache[key] = nil }
        }
    }

    /// The stored key of `digest`: from the cache while it is fresh, otherwise from the ledger.
    private func lookUp(_ digest: SHA256Digest) async throws(APIError) -> StoredAPIKey? {
        let instant = ContinuousClock.now
        if let cached = cache.withLock({ $0[digest] }), instant - cached.readAt < cacheInterval {
            return cached.key
        }
        let key: StoredAPIKey?
        do throws(LedgerError) {
            key = try await store.apiKey(digest: Array(digest))
        } catch {
            throw APIError.ledger(error, logger: logger)
        }
        cache.withLock { cache in
            if cache.count >= Self.cacheLimit { cache.removeAll(keepingCapacity: true) }
            cache[digest] = (key, instant)
        }
        return key
    }

    /// Writes the key's last use, when this instance has not for ``usageInterval``. A failed
    /// write is logged and never fails the request.
    private func recordUse(of name: String) async {
        let instant = ContinuousClock.now
        let due = usesWritten.withLock { written -> Bool in
            if let last = written[name], instant - last < usageInterval { return false }
            written[name] = instant
            return true
        }
        guard due else { return }
        do throws(LedgerError) {
            try await store.recordAPIKeyUses([name: now()])
        } catch {
            logger.warning("an API key's last use could not be recorded", metadata: ["api_key": "\(name)", "ledger.code": "\(error.code)"])
        }
    }
}

/// One key's token bucket.
struct TokenBucket: Sendable {
    private var tokens: Double
    private var updated: ContinuousClock.Instant

    init(limit: APIKeyRateLimit, at instant: ContinuousClock.Instant) {
        tokens = Double(limit.requests)
        updated = instant
    }

    /// Takes a token: `nil` when one was there, otherwise the seconds until one is.
    mutating func take(limit: APIKeyRateLimit, at instant: ContinuousClock.Instant) -> Double? {
        let capacity = Double(limit.requests)
        let rate = capacity / Double(limit.seconds)
        let elapsed = instant - updated
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        tokens = min(capacity, tokens + max(0, seconds) * rate)
        updated = instant
        if tokens >= 1 {
            tokens -= 1
            return nil
        }
        return (1 - tokens) / rate
    }
}

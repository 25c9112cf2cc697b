import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import StoreGateCore
import StoreGateEvents
import StoreGateLedger
import StoreGateTestSupport
import Synchronization
import Testing

@testable import StoreGateServer

/// Every log line an application wrote, message and metadata, to check that no secret is in one.
final class RecordingLogs: Sendable {
    private let lines = Mutex<[String]>([])

    var all: [String] { lines.withLock { $0 } }

    func append(_ line: String) { lines.withLock { $0.append(line) } }

    var logger: Logger {
        var logger = Logger(label: "storegate.tests.recorded") { _ in RecordingLogHandler(logs: self) }
        logger.logLevel = .trace
        return logger
    }
}

struct RecordingLogHandler: LogHandler {
    let logs: RecordingLogs
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        logs.append("\(event.level) \(event.message) \(merged.map { "\($0.key)=\($0.value)" }.sorted().joined(separator: " "))")
    }
}

@Suite("Live administration: API keys and webhook endpoints through the API")
struct LiveAdminTests {
    static let adminKey = "admin-key-0123456789abcdef"
    static let hooksKey = "hooks-key-0123456789abcdef"

    static func configuration() throws -> ServerConfiguration {
        var configuration = try TestData.configuration()
        var keys = configuration.apiKeys
        try keys.add(name: "admin", secret: adminKey, permissions: [.keysManage, .entitlementsRead, .eventsRead])
        try keys.add(name: "hooks", secret: hooksKey, permissions: [.webhooksManage])
        configuration.apiKeys = keys
        return configuration
    }

    static func application(_ configuration: ServerConfiguration, logs: RecordingLogs? = nil) -> StoreGateApplication {
        let ledger = InMemoryLedger(configuration: LedgerConfiguration(catalog: configuration.catalog))
        var logger = Logger(label: "storegate.tests")
        logger.logLevel = .critical
        return buildApplication(configuration: configuration, ledger: ledger, logger: logs?.logger ?? logger)
    }

    @Test("a key is created with its permissions and shown once, works at once, is listed without its secret, and is refused once revoked")
    func keyLifecycle() async throws {
        let logs = RecordingLogs()
        let app = Self.application(try Self.configuration(), logs: logs)
        try await app.testRouter { client in
            let created = try await client.send(
                .post, "/v1/keys", key: Self.adminKey, body: try TestData.json(["name": "billing", "permissions": ["entitlements.read"]])
            )
            #expect(created.status == .created, "\(created.text)")
            let secret = try #require(try created.json["secret"] as? String)
            #expect(secret.hasPrefix("sg_") && secret.count > 40)
            #expect(try created.json["permissions"] as? [String] == ["entitlements.read"])
            #expect(try created.json["createdBy"] as? String == "admin")

            let read = try await client.send(.get, "/v1/accounts/nobody/entitlements", key: secret)
            #expect(read.status == .ok)
            let forbidden = try await client.send(.get, "/v1/events", key: secret)
            #expect(forbidden.status == .forbidden)
            #expect(forbidden.code == "forbidden")

            let list = try await client.send(.get, "/v1/keys", key: Self.adminKey)
            #expect(list.status == .ok)
            #expect(!list.text.contains(secret), "a list never shows a secret")
            #expect(!list.text.contains(Self.adminKey))
            let keys = try list.json["keys"] as? [[String: Any]] ?? []
            #expect(keys.compactMap { $0["name"] as? String } == ["admin", "billing", "full", "hooks", "reader"])
            let billing = try #require(keys.first { $0["name"] as? String == "billing" })
            #expect(billing["source"] as? String == "ledger")
            #expect(billing["state"] as? String == "active")
            #expect(billing["lastUsedAt"] as? String != nil, "the first use is recorded")
            #expect(billing["secret"] == nil)
            #expect(keys.first { $0["name"] as? String == "full" }?["source"] as? String == "configuration")

            let revoked = try await client.send(.post, "/v1/keys/billing/revoke", key: Self.adminKey)
            #expect(revoked.status == .ok)
            #expect(try revoked.json["state"] as? String == "revoked")
            let refused = try await client.send(.get, "/v1/accounts/nobody/entitlements", key: secret)
            #expect(refused.status == .unauthorized)
            #expect(refused.code == "unauthorized")
            #expect(try await client.send(.post, "/v1/keys/billing/revoke", key: Self.adminKey).status == .ok, "revoking again changes nothing")
        }
        let lines = logs.all
        #expect(lines.contains { $0.contains("an API key was created") && $0.contains("billing") })
        #expect(!lines.contains { $0.contains("sg_") }, "no key secret reaches a log line")
        #expect(!lines.contains { $0.contains(Self.adminKey) })
    }

    @Test("key creation refuses by code: a permission the caller lacks, a name taken, bad fields; configured keys are not revocable")
    func keyRefusals() async throws {
        let app = Self.application(try Self.configuration())
        try await app.testRouter { client in
            func create(_ body: [String: Any], key: String = Self.adminKey) async throws -> TestResponse {
                try await client.send(.post, "/v1/keys", key: key, body: try TestData.json(body))
            }
            let escalation = try await create(["name": "root", "permissions": ["*"]])
            #expect(escalation.status == .forbidden)
            #expect(escalation.code == "permission_not_held")
            #expect(try await create(["name": "grants", "permissions": ["grants.manage"]]).code == "permission_not_held")
            #expect(try await create(["name": "full", "permissions": ["events.read"]]).code == "api_key_exists")
            #expect(try await create(["name": "one", "permissions": ["events.read"]]).status == .created)
            let taken = try await create(["name": "one", "permissions": ["events.read"]])
            #expect(taken.status == .conflict)
            #expect(taken.code == "api_key_exists")
            #expect(try await create(["name": "x", "permissions": ["nope"]]).code == "invalid_field")
            #expect(try await create(["name": "x", "permissions": []]).code == "invalid_field")
            #expect(try await create(["name": "x"]).code == "missing_field")
            #expect(try await create(["name": "bad name", "permissions": ["events.read"]]).code == "invalid_argument")
            #expect(try await create(["name": "x", "permissions": ["events.read"], "expiresAt": "2001-01-01T00:00:00Z"]).code == "invalid_field")
            #expect(try await create(["name": "x", "permissions": ["events.read"], "rateLimit": ["requests": 0, "seconds": 1]]).code == "invalid_field")
            #expect(try await create(["name": "x", "permissions": ["events.read"], "extra": 1]).code == "unknown_field")
            #expect(try await create(["name": "x", "permissions": ["events.read"]], key: Self.hooksKey).status == .forbidden)
            #expect(try await client.send(.get, "/v1/keys", key: TestData.readerKey).status == .forbidden)
            #expect(try await client.send(.get, "/v1/keys", key: nil).status == .unauthorized)

            let configured = try await client.send(.post, "/v1/keys/full/revoke", key: Self.adminKey)
            #expect(configured.status == .conflict)
            #expect(configured.code == "api_key_not_revocable")
            let missing = try await client.send(.post, "/v1/keys/nobody/revoke", key: Self.adminKey)
            #expect(missing.status == .notFound)
            #expect(missing.code == "api_key_not_found")
        }
    }

    @Test("an expired key is refused")
    func expiry() async throws {
        let configuration = try Self.configuration()
        let ledger = InMemoryLedger(configuration: LedgerConfiguration(catalog: configuration.catalog))
        let secret = "sg_expired-key-0123456789abcdef"
        _ = try await ledger.createAPIKey(StoredAPIKey(
            name: "old", digest: Array(SHA256Hex.digest(secret)), permissions: ["entitlements.read"], createdAt: Date().addingTimeInterval(-7200),
            createdBy: "test", expiresAt: Date().addingTimeInterval(-3600)
        ))
        var logger = Logger(label: "storegate.tests")
        logger.logLevel = .critical
        let app = buildApplication(configuration: configuration, ledger: ledger, logger: logger)
        try await app.testRouter { client in
            #expect(try await client.send(.get, "/v1/accounts/a/entitlements", key: secret).status == .unauthorized)
            let listed = try await client.send(.get, "/v1/keys", key: TestData.fullKey)
            #expect((try listed.json["keys"] as? [[String: Any]])?.first { $0["name"] as? String == "old" }?["state"] as? String == "expired")
        }
    }

    @Test("a key over its rate limit gets 429 with Retry-After; other keys are not affected; the default limit applies to configured keys")
    func rateLimits() async throws {
        var configuration = try Self.configuration()
        configuration.apiKeyRateLimit = try APIKeyRateLimit(requests: 3, seconds: 3600)
        let app = Self.application(configuration)
        try await app.testRouter { client in
            let created = try await client.send(
                .post, "/v1/keys", key: TestData.fullKey,
                body: try TestData.json(["name": "limited", "permissions": ["entitlements.read"], "rateLimit": ["requests": 2, "seconds": 60]])
            )
            #expect(created.status == .created)
            #expect(member(try created.json, "rateLimit", "requests") as? Int == 2)
            let secret = try #require(try created.json["secret"] as? String)
            #expect(try await client.send(.get, "/v1/accounts/a/entitlements", key: secret).status == .ok)
            #expect(try await client.send(.get, "/v1/accounts/a/entitlements", key: secret).status == .ok)
            let limited = try await client.send(.get, "/v1/accounts/a/entitlements", key: secret)
            #expect(limited.status == .tooManyRequests)
            #expect(limited.code == "too_many_requests")
            let retryAfter = try #require(limited.headers[.retryAfter].flatMap { Int($0) })
            #expect((1...30).contains(retryAfter), "one token comes back after 30 s at 2 per minute")
            #expect(try limited.json["retryable"] as? Bool == true)

            // The configured reader key has the default: 3 an hour (the full key spent one above).
            for _ in 0..<3 {
                #expect(try await client.send(.get, "/v1/accounts/a/entitlements", key: TestData.readerKey).status == .ok)
            }
            let reader = try await client.send(.get, "/v1/accounts/a/entitlements", key: TestData.readerKey)
            #expect(reader.status == .tooManyRequests)
            #expect(Int(reader.headers[.retryAfter] ?? "") ?? 0 >= 1000, "a token per 1200 s")
        }
    }

    @Test("the token bucket refills at its rate and never above its size")
    func tokenBucket() throws {
        let limit = try APIKeyRateLimit(requests: 2, seconds: 1)
        let start = ContinuousClock.now
        var bucket = TokenBucket(limit: limit, at: start)
        var waits: [Double?] = []
        for instant in [start, start, start, start + .milliseconds(500), start + .seconds(100), start + .seconds(100), start + .seconds(100)] {
            waits.append(bucket.take(limit: limit, at: instant))
        }
        #expect(waits[0] == nil && waits[1] == nil, "a full bucket of 2")
        let wait = try #require(waits[2])
        #expect(abs(wait - 0.5) < 0.001, "one token every 0.5 s")
        #expect(waits[3] == nil, "refilled after 0.5 s")
        #expect(waits[4] == nil && waits[5] == nil)
        #expect(waits[6] != nil, "the bucket holds 2 at most")
    }
}

/// SHA-256 for the tests' stored keys.
enum SHA256Hex {
    static func digest(_ text: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(text.utf8)))
    }
}

import Foundation
import StoreGateCore
import StoreGateLedgerSQLite
import Testing

@testable import StoreGateServer
import Logging
import StoreGateAppStoreClient
import StoreGateEvents
import StoreGateLedger
import StoreGateSync
import StoreGateTestSupport

@Suite("Configuration from environment variables and flags")
struct ConfigurationTests {
    @Test("no variables give a working service on ./storegate.sqlite at 127.0.0.1:8080")
    func defaults() throws {
        let configuration = try ServerConfiguration.load(environment: [:])
        #expect(configuration.host == "127.0.0.1")
        #expect(configuration.port == 8080)
        #expect(configuration.database == .sqlite(path: "./storegate.sqlite"))
        #expect(configuration.maxBodyBytes == 4 << 20)
        #expect(configuration.environments == [.production, .sandbox])
        #expect(configuration.apiKeys.isEmpty)
        #expect(configuration.apps.isEmpty)
        #expect(configuration.encryption == nil)
        #expect(configuration.sharedSecret == nil)
        #expect(!configuration.consumption.customerConsented)  // nothing goes to Apple unless the app says so
        #expect(configuration.transferPolicy == .refuse)  // a purchase stays with its first account unless the operator says so
        #expect(configuration.startupWarnings.contains { $0.contains("STOREGATE_BUNDLE_IDS") })
    }

    @Test("every setting is read")
    func everySetting() throws {
        let directory = try TemporaryFiles.directory("config")
        let keysFile = directory.appendingPathComponent("keys")
        try Data("# keys\nbackend backend-secret-0123456789 receipts.verify entitlements.read\nops ops-secret-0123456789abc *\n".utf8).write(to: keysFile)
        let secretFile = directory.appendingPathComponent("secret")
        try Data("  shared-secret-value\n".utf8).write(to: secretFile)
        let products = directory.appendingPathComponent("products.json")
        try Data(#"{"products": {"coins": {"type": "Consumable"}}}"#.utf8).write(to: products)
        let key = Data(repeating: 7, count: 32).base64EncodedString()
        let webhooks = directory.appendingPathComponent("webhooks.json")
        try Data(#"{"endpoints": [{"name": "backend", "url": "http://backend.internal/hook", "secret": "whsec_0123456789abcdef", "types": ["transaction.revoked"]}]}"#.utf8).write(to: webhooks)

        let configuration = try ServerConfiguration.load(environment: [
            "STOREGATE_HOST": "0.0.0.0",
            "STOREGATE_PORT": "9090",
            "STOREGATE_DATABASE": "postgres://storegate:pw@db.internal:5433/ledger",
            "STOREGATE_API_KEYS": "ci:ci-secret-0123456789abcd",
            "STOREGATE_API_KEYS_FILE": keysFile.path,
            "STOREGATE_BUNDLE_IDS": "com.example.a, com.example.b",
            "STOREGATE_APP_VERSIONS": "com.example.a=41,com.example.a=42",
            "STOREGATE_APP_APPLE_IDS": "com.example.b=123456789",
            "STOREGATE_ENVIRONMENTS": "production",
            "STOREGATE_LEDGER_KEYS": "k2025=\(key)",
            "STOREGATE_SHARED_SECRET_FILE": secretFile.path,
            "STOREGATE_MAX_BODY_BYTES": "65536",
            "STOREGATE_PRODUCTS_FILE": products.path,
            "STOREGATE_ACCOUNT_TOKEN_NAMESPACE": "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
            "STOREGATE_SQLITE_SYNCHRONOUS": "full",
            "STOREGATE_SQLITE_PAGE_CACHE_MB": "8",
            "STOREGATE_SQLITE_MMAP_MB": "64",
            "STOREGATE_TRANSFER_POLICY": "Transfer",
            "STOREGATE_POSTGRES_MAX_CONNECTIONS": "7",
            "STOREGATE_LOG_LEVEL": "debug",
            "STOREGATE_SHUTDOWN_GRACE_SECONDS": "5",
            "STOREGATE_WEBHOOKS_FILE": webhooks.path,
            "STOREGATE_CONSUMPTION": "consented",
            "STOREGATE_CONSUMPTION_SAMPLE_CONTENT": "on",
            "STOREGATE_CONSUMPTION_REFUND_PREFERENCE": "grant_prorated",
            "STOREGATE_CONSUMPTION_REFUND_POLICY": "consumed>=80%:decline; age<7d:grant_full",
        ])
        #expect(configuration.host == "0.0.0.0")
        #expect(configuration.port == 9090)
        #expect(configuration.database == .postgres(url: "postgres://storegate:pw@db.internal:5433/ledger"))
        #expect("\(configuration.database)".contains("pw") == false)
        #expect(configuration.apiKeys.names == ["backend", "ci", "ops"])
        #expect(configuration.apiKeys.match("backend-secret-0123456789")?.permissions == [.receiptsVerify, .entitlementsRead])
        #expect(configuration.apiKeys.match("ops-secret-0123456789abc")?.permissions == Set(Permission.allCases))
        #expect(configuration.apps == [
            .init(bundleId: "com.example.a", appVersions: ["41", "42"]),
            .init(bundleId: "com.example.b", appAppleId: 123_456_789),
        ])
        #expect(configuration.environments == [.production])
        #expect(configuration.encryption?.keyIDs == ["k2025"])
        #expect(configuration.sharedSecret?.value == "shared-secret-value")
        #expect(configuration.maxBodyBytes == 65536)
        #expect(configuration.catalog.products["coins"]?.type == .consumable)
        #expect(configuration.accountTokenPolicy == .nameBased(namespace: UUID(uuidString: "6ba7b810-9dad-11d1-80b4-00c04fd430c8")!))
        #expect(configuration.sqliteSynchronous == .full)
        #expect(configuration.sqlitePageCacheMB == 8)
        #expect(configuration.sqliteMmapMB == 64)
        #expect(configuration.transferPolicy == .transfer)
        #expect(configuration.postgresMaxConnections == 7)
        #expect(configuration.logLevel == .debug)
        #expect(configuration.shutdownGracePeriod == .seconds(5))
        #expect(configuration.webhooks.map(\.name) == ["backend"])
        #expect(configuration.consumption.customerConsented)
        #expect(configuration.consumption.sampleContentProvided)
        #expect(configuration.consumption.refundPreference == .grantProrated)
        #expect(configuration.consumption.refundPolicy?.description == "consumed>=80%:decline; age<7d:grant_full")
        #expect(configuration.webhooks.first?.types == ["transaction.revoked"])
        #expect(configuration.startupWarnings.contains { $0.contains("webhook endpoint 'backend' is plain http") })
        let summary = configuration.summary.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        #expect(!summary.contains("secret-0123456789"))
        #expect(!summary.contains("shared-secret-value"))
        #expect(!summary.contains(key))
    }

    /// A bad value per setting; the error must name the setting (or, for a Server API
    /// credential given alone, the first missing one).
    static let invalid: [(String, String)] = [
        ("STOREGATE_PORT", "http"),
        ("STOREGATE_PORT", "70000"),
        ("STOREGATE_HOST", "local host"),
        ("STOREGATE_DATABASE", "mysql://x"),
        ("STOREGATE_DATABASE", "sqlite:"),
        ("STOREGATE_DATABASE", "postgres://host-without-user/db"),
        ("STOREGATE_API_KEYS", "short:abc"),
        ("STOREGATE_API_KEYS", "no-secret-here"),
        ("STOREGATE_API_KEYS", "a:same-secret-0123456789,b:same-secret-0123456789"),
        ("STOREGATE_API_KEYS_FILE", "/nonexistent/storegate-keys"),
        ("STOREGATE_BUNDLE_IDS", "com.example a"),
        ("STOREGATE_APP_VERSIONS", "com.other=1"),
        ("STOREGATE_APP_APPLE_IDS", "minus-one"),
        ("STOREGATE_ENVIRONMENTS", "staging"),
        ("STOREGATE_TRUST_DIR", "/nonexistent/storegate-trust"),
        ("STOREGATE_LEDGER_KEYS", "k=not-base64!"),
        ("STOREGATE_LEDGER_KEYS", "k=AAAA"),
        ("STOREGATE_SHARED_SECRET_FILE", "/nonexistent/secret"),
        ("STOREGATE_APPSTORE_KEY_ID", "ABC123"),
        ("STOREGATE_MAX_BODY_BYTES", "12"),
        ("STOREGATE_PRODUCTS_FILE", "/nonexistent/products.json"),
        ("STOREGATE_ACCOUNT_TOKEN_NAMESPACE", "not-a-uuid"),
        ("STOREGATE_SQLITE_SYNCHRONOUS", "off"),
        ("STOREGATE_SQLITE_PAGE_CACHE_MB", "0"),
        ("STOREGATE_SQLITE_MMAP_MB", "-1"),
        ("STOREGATE_TRANSFER_POLICY", "move"),
        ("STOREGATE_POSTGRES_MAX_CONNECTIONS", "0"),
        ("STOREGATE_LOG_LEVEL", "verbose"),
        ("STOREGATE_SHUTDOWN_GRACE_SECONDS", "-1"),
        ("STOREGATE_SYNC", "sometimes"),
        ("STOREGATE_SYNC_INTERVAL_SECONDS", "1"),
        ("STOREGATE_SYNC_LOOKBACK_SECONDS", "-5"),
        ("STOREGATE_SYNC_START", "yesterday"),
        ("STOREGATE_REFRESH_ON_FIRST_SIGHT", "maybe"),
        ("STOREGATE_CONSUMPTION", "on"),
        ("STOREGATE_CONSUMPTION_SAMPLE_CONTENT", "sometimes"),
        ("STOREGATE_CONSUMPTION_REFUND_PREFERENCE", "grant_half"),
        ("STOREGATE_CONSUMPTION_REFUND_POLICY", "consumed>=50%:grant_half"),
        ("STOREGATE_CONSUMPTION_REFUND_POLICY", "decline"),
        ("STOREGATE_REFRESH_INTERVAL_SECONDS", "100000"),
        ("STOREGATE_APPSTORE_API_URL", "http://api.example.com"),
        ("STOREGATE_APPSTORE_API_URL_PRODUCTION", "http://api.example.com"),
        ("STOREGATE_APPSTORE_API_URL_SANDBOX", "https://user:pw@api.example.com"),
    ]

    @Test("a bad value stops start-up with one line naming the setting and its flag", arguments: invalid)
    func invalidSetting(_ setting: String, _ value: String) throws {
        var environment = ["STOREGATE_BUNDLE_IDS": "com.example.app"]
        environment[setting] = value
        let error = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration.load(environment: environment)
        }
        let named = setting == "STOREGATE_APPSTORE_KEY_ID" ? "STOREGATE_APPSTORE_ISSUER_ID" : setting
        #expect(error.setting == named)
        #expect(error.description.hasPrefix("invalid configuration: \(named)"))
        #expect(!error.description.contains("\n"))
        if let flag = ServerConfiguration.Setting(rawValue: named)?.flag {
            #expect(error.description.contains(flag))
        }
    }

    @Test("secrets given inline have no flag; every other setting has one")
    func flags() {
        #expect(ServerConfiguration.Setting.apiKeys.flag == nil)
        #expect(ServerConfiguration.Setting.ledgerKeys.flag == nil)
        #expect(ServerConfiguration.Setting.sharedSecret.flag == nil)
        #expect(ServerConfiguration.Setting.port.flag == "--port")
        #expect(ServerConfiguration.Setting.trustDirectory.flag == "--trust-dir")
        #expect(ServerConfiguration.Setting.appStorePrivateKeyFile.flag == "--appstore-private-key-file")
    }

    @Test("a secret is never part of a configuration error")
    func secretsStayOutOfErrors() throws {
        let error = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration.load(environment: ["STOREGATE_API_KEYS": "a:has space-in-it-0123456789"])
        }
        #expect(!error.description.contains("in-it-0123456789"))
    }

    @Test("an unknown permission in the key file names the line")
    func keyFilePermission() throws {
        var keys = APIKeyStore()
        let error = try #require(throws: ConfigurationError.self) {
            try keys.add(fileContents: "\n# comment\nbackend backend-secret-0123456789 receipts.write\n")
        }
        #expect(error.setting == "STOREGATE_API_KEYS_FILE")
        #expect(error.reason.contains("line 3"))
    }

    @Test("keys match only their own secret, whatever the other keys")
    func keyMatching() throws {
        var keys = APIKeyStore()
        try keys.add(name: "a", secret: "secret-aaaaaaaaaaaaaaaa")
        try keys.add(name: "b", secret: "secret-bbbbbbbbbbbbbbbb", permissions: [.entitlementsRead])
        #expect(keys.match("secret-aaaaaaaaaaaaaaaa")?.name == "a")
        #expect(keys.match("secret-bbbbbbbbbbbbbbbb")?.name == "b")
        #expect(keys.match("secret-bbbbbbbbbbbbbbb") == nil)
        #expect(keys.match("") == nil)
        #expect(APIKeyStore().match("secret-aaaaaaaaaaaaaaaa") == nil)
    }

    @Test("without keys, serve creates a 0600 key file once and reads it again")
    func developmentKeyFile() throws {
        let directory = try TemporaryFiles.directory("devkeys")
        let database = ServerConfiguration.Database.sqlite(path: directory.appendingPathComponent("ledger.sqlite").path)
        let first = try DevelopmentKeyFile.loadOrCreate(for: database)
        #expect(first.created)
        #expect(first.keys.names == ["default"])
        let attributes = try FileManager.default.attributesOfItem(atPath: first.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let second = try DevelopmentKeyFile.loadOrCreate(for: database)
        #expect(!second.created)
        #expect(second.path == first.path)
        let text = try String(contentsOfFile: first.path, encoding: .utf8)
        let secret = try #require(text.split(separator: "\n").first { !$0.hasPrefix("#") }?.split(separator: " ").last)
        #expect(second.keys.match(secret)?.name == "default")
    }

    @Test("a webhooks file that cannot be used stops start-up naming the setting", arguments: [
        "[]", "{}", #"{"endpoints": {}}"#, #"{"endpoints": [{"name": "a", "url": "https://x/h"}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secret": "short"}]}"#,
        #"{"endpoints": [{"name": "a", "url": "ftp://x/h", "secret": "whsec_0123456789abcdef"}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secret": "whsec_0123456789abcdef", "types": []}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secret": "whsec_0123456789abcdef", "extra": 1}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secret": "whsec_0123456789abcdef"}, {"name": "a", "url": "https://y/h", "secret": "whsec_0123456789abcdef"}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secrets": []}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secrets": "whsec_0123456789abcdef"}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secrets": ["whsec_0123456789abcdef", 7]}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secrets": ["whsec_0123456789abcdef", "short"]}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secrets": ["whsec_0123456789abcdef", "whsec_0123456789abcdef"]}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secret": "whsec_0123456789abcdef", "secrets": ["plain-secret-0123456789"]}]}"#,
        #"{"endpoints": [{"name": "a", "url": "https://x/h", "secret": 12345678901234567890}]}"#,
    ])
    func badWebhooksFile(_ text: String) throws {
        let file = try TemporaryFiles.file(Array(text.utf8), name: "webhooks.json", prefix: "webhooks")
        defer { try? FileManager.default.removeItem(at: file) }
        do {
            _ = try ServerConfiguration.load(environment: ["STOREGATE_WEBHOOKS_FILE": file.path])
            Issue.record("accepted \(text)")
        } catch {
            #expect(error.setting == "STOREGATE_WEBHOOKS_FILE", "\(error)")
        }
    }

    @Test("a webhooks file gives an endpoint several secrets (a rotation) or one, and warns about a whsec_ secret that is not base64 or a short key")
    func webhookSecrets() throws {
        let text = #"""
            {"endpoints": [
              {"name": "rotating", "url": "https://x/h", "secrets": ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "plain-secret-0123456789"]},
              {"name": "single", "url": "https://y/h", "secret": "whsec_not-base64-0123456789"},
              {"name": "short", "url": "https://z/h", "secrets": ["whsec_0123456789abcdef"]}
            ]}
            """#
        let file = try TemporaryFiles.file(Array(text.utf8), name: "webhooks.json", prefix: "webhooks")
        defer { try? FileManager.default.removeItem(at: file) }
        let configuration = try ServerConfiguration.load(environment: ["STOREGATE_WEBHOOKS_FILE": file.path])
        #expect(configuration.webhooks.map(\.name) == ["rotating", "single", "short"])
        #expect(configuration.webhooks[0].secrets.map(\.form) == [.standard, .plain])
        #expect(configuration.webhooks[0].secrets.map(\.text) == ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "plain-secret-0123456789"])
        #expect(configuration.webhooks[1].secrets.map(\.form) == [.plain])
        #expect(configuration.webhooks[2].secrets.map(\.standardKey.count) == [12])
        let warnings = configuration.startupWarnings
        #expect(warnings.contains { $0.contains("webhook endpoint 'single'") && $0.contains("not base64") })
        #expect(warnings.contains { $0.contains("webhook endpoint 'short'") && $0.contains("12 bytes") })
        #expect(!warnings.contains { $0.contains("'rotating'") })
        #expect(!warnings.contains { $0.contains("not-base64") || $0.contains("0123456789abcdef") || $0.contains("MfKQ9r8") })
    }

    @Test("event retention is off by default, whole days from 7, and refused below (webhooks retry for 3)", arguments: [
        ("30", 30), ("7", 7), ("6", nil), ("0", nil), ("-1", nil), ("1.5", nil), ("36501", nil),
    ] as [(String, Int?)])
    func eventsRetention(_ text: String, _ days: Int?) throws {
        #expect(try ServerConfiguration.load(environment: [:]).eventsRetention == nil)
        if let days {
            #expect(try ServerConfiguration.load(environment: ["STOREGATE_EVENTS_RETENTION_DAYS": text]).eventsRetention == .seconds(days * 86_400))
        } else {
            let error = try #require(throws: ConfigurationError.self) {
                try ServerConfiguration.load(environment: ["STOREGATE_EVENTS_RETENTION_DAYS": text])
            }
            #expect(error.setting == "STOREGATE_EVENTS_RETENTION_DAYS")
        }
    }

    @Test("the refund policy is off by default and with none; the fixed preference keeps working beside it")
    func refundPolicy() throws {
        #expect(try ServerConfiguration.load(environment: [:]).consumption.refundPolicy == nil)
        #expect(try ServerConfiguration.load(environment: ["STOREGATE_CONSUMPTION_REFUND_POLICY": "none"]).consumption.refundPolicy == nil)
        let both = try ServerConfiguration.load(environment: [
            "STOREGATE_CONSUMPTION_REFUND_PREFERENCE": "decline", "STOREGATE_CONSUMPTION_REFUND_POLICY": "type=consumable & consumed<10%:grant_full",
        ])
        #expect(both.consumption.refundPreference == .decline)
        #expect(both.consumption.refundPolicy?.rules == [
            ConsumptionRefundPolicy.Rule([.productType(equals: true, .consumable), .consumed(.less, milliunits: 10_000)], .grantFull),
        ])
        let error = try #require(throws: ConfigurationError.self) {
            try ServerConfiguration.load(environment: ["STOREGATE_CONSUMPTION_REFUND_POLICY": "*:decline; age<7y:grant_full"])
        }
        #expect(error.description.contains("rule 2"), "\(error)")
        #expect(ServerConfiguration.Setting.consumptionRefundPolicy.flag == "--consumption-refund-policy")
    }
}

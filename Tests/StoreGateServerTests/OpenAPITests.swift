import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import StoreGateHTTP
import StoreGateTestSupport
import Testing
import Hummingbird
import Logging
import StoreGateLedger
import StoreGateEvents
import StoreGateWorkers
import StoreGateAppStoreClient

import StoreGateConsole
@testable import StoreGateServer

/// The Python tools that validate the document and the replies (openapi-spec-validator,
/// jsonschema). Where they are missing the tests that need them are skipped — unless
/// `STOREGATE_REQUIRE_OPENAPI_TOOLS` is set (CI sets it), where they run and fail.
enum OpenAPITools {
    static let script = Fixtures.packageRoot.appendingPathComponent("Scripts/openapi_check.py").path
    static let specification = Fixtures.packageRoot.appendingPathComponent("Sources/StoreGateServer/Resources/openapi.yaml").path

    static let isRequired = ProcessInfo.processInfo.environment["STOREGATE_REQUIRE_OPENAPI_TOOLS"].map { !$0.isEmpty && $0 != "0" } ?? false

    static let isAvailable: Bool = {
        (try? run(["python3", "-c", "import yaml, jsonschema, referencing, openapi_spec_validator"]).status) == 0
    }()

    static let shouldRun = isAvailable || isRequired

    static let skipMessage = "python3 with openapi-spec-validator and jsonschema is not installed (pip install openapi-spec-validator): skipping; set STOREGATE_REQUIRE_OPENAPI_TOOLS=1 to make this a failure"

    /// Runs a command, returning its exit status and output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }
}

/// Replies recorded for the OpenAPI check: method, path template, status, content type, body.
/// `@unchecked Sendable`: the JSON values are only touched under the lock.
final class ExchangeRecorder: @unchecked Sendable {
    private let lock = NSLock()
    private var exchanges: [[String: Any]] = []

    func record(_ method: HTTPRequest.Method, _ template: String, _ response: TestResponse) {
        let entry: [String: Any] = [
            "method": method.rawValue,
            "path": template,
            "status": response.status.code,
            "contentType": response.headers[.contentType] ?? "",
            "body": response.text,
        ]
        lock.withLock { exchanges.append(entry) }
    }

    var count: Int { lock.withLock { exchanges.count } }

    func write(to url: URL) throws {
        let data = try lock.withLock { try JSONSerialization.data(withJSONObject: exchanges, options: [.prettyPrinted]) }
        try data.write(to: url)
    }
}

/// A transport for a deliverer that never sends (the route table only).
struct UnusedTransport: HTTPTransport {
    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse {
        TransportResponse(status: 599, headers: [], body: [])
    }
}

@Suite("The OpenAPI document")
struct OpenAPITests {
    /// Every route the application registers (its route tables), as (method, OpenAPI path).
    static func declaredRoutes() throws -> [Route] {
        let configuration = try TestData.configuration()
        let endpoints = Endpoints(
            configuration: configuration, verification: ProofVerification(configuration: configuration, now: { Date() }), ledger: InMemoryLedger(),
            appStore: nil, metrics: ServerMetrics(), workers: WorkerRegistry(), catalog: CatalogStore(configuration.catalog, path: nil),
            now: { Date() }, openAPIDocument: nil,
            logger: Logger(label: "storegate.tests"),
            keys: APIKeyAuthenticator(configuration: configuration, store: InMemoryLedger(), now: { Date() }, logger: Logger(label: "storegate.tests")),
            webhooks: WebhookDeliveryService(
                store: InMemoryLedger(), endpoints: [], transport: UnusedTransport(), logger: Logger(label: "storegate.tests")
            )
        )
        return applicationRoutes(endpoints, console: Console(endpoints: endpoints, persist: MemoryPersistDriver()))
    }

    /// The operations `openapi.yaml` documents, as "method path".
    static func documentedOperations() throws -> Set<String> {
        let document = String(decoding: try #require(OpenAPIDocument.load()), as: UTF8.self)
        var operations: Set<String> = []
        var path: String?
        var inPaths = false
        for line in document.split(separator: "\n", omittingEmptySubsequences: false) {
            if line == "paths:" { inPaths = true; continue }
            guard inPaths else { continue }
            if !line.isEmpty, !line.hasPrefix(" ") { break }  // the next top-level section
            if line.hasPrefix("  /"), line.hasSuffix(":") {
                path = String(line.dropFirst(2).dropLast())
            } else if let path, line.hasPrefix("    "), !line.hasPrefix("     "), line.hasSuffix(":") {
                let method = line.trimmingCharacters(in: .whitespaces).dropLast()
                if ["get", "put", "post", "delete", "patch", "head", "options"].contains(String(method)) {
                    operations.insert("\(method) \(path)")
                }
            }
        }
        return operations
    }

    @Test("documents exactly the routes the application serves: none missing from the document, none documented that is not served")
    func documentsEveryRoute() throws {
        let declared = Set(try Self.declaredRoutes().filter(\.isDocumented).map { "\($0.method.rawValue.lowercased()) \($0.openAPIPath)" })
        let documented = try Self.documentedOperations()
        #expect(declared.count >= 17)
        #expect(declared.subtracting(documented).sorted() == [], "served but not documented")
        #expect(documented.subtracting(declared).sorted() == [], "documented but not served")
    }

    @Test("ErrorReply's code enum is exactly the service's error-code vocabulary")
    func errorCodes() throws {
        let document = String(decoding: try #require(OpenAPIDocument.load()), as: UTF8.self)
        let lines = document.split(separator: "\n").map(String.init)
        let reply = try #require(lines.firstIndex(of: "    ErrorReply:"))
        let start = try #require(lines[reply...].firstIndex(of: "          enum: ["))
        let end = try #require(lines[start...].firstIndex(of: "          ]"))
        let documented = lines[(start + 1)..<end].joined().split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        #expect(documented == APIErrorCode.all.map(\.rawValue))
        #expect(Set(APIErrorCode.serviceCodes).isSubset(of: Set(APIErrorCode.all)))
    }

    @Test("the 405 table is the route table: every declared path answers its methods and HEAD with GET")
    func allowTableFromRoutes() throws {
        let routes = try Self.declaredRoutes()
        let table = RouteTable(Route.allowedMethods(of: routes))
        for route in routes {
            let concrete = route.path.split(separator: "/", omittingEmptySubsequences: false).map { $0.hasPrefix(":") ? "x" : String($0) }.joined(separator: "/")
            let allowed = try #require(table.allowedMethods(forPath: concrete), "\(route.path)")
            #expect(allowed.contains(route.method))
            if route.method == .get { #expect(allowed.contains(.head)) }
        }
        #expect(table.allowedMethods(forPath: "/v1/nothing") == nil)
    }

    @Test("is a valid OpenAPI 3.1 document", .enabled(if: OpenAPITools.shouldRun, Comment(rawValue: OpenAPITools.skipMessage)))
    func valid() async throws {
        try #require(OpenAPITools.isAvailable, Comment(rawValue: OpenAPITools.skipMessage))
        let result = try await runBlocking { try OpenAPITools.run(["python3", OpenAPITools.script, OpenAPITools.specification]) }
        #expect(result.status == 0, Comment(rawValue: result.output))
    }

    @Test("the live server's replies match it, for every endpoint and error", .enabled(if: OpenAPITools.shouldRun, Comment(rawValue: OpenAPITools.skipMessage)))
    func repliesMatch() async throws {
        try #require(OpenAPITools.isAvailable, Comment(rawValue: OpenAPITools.skipMessage))
        var configuration = try TestData.entitlementsConfiguration()
        configuration.maxBodyBytes = 64 << 10
        // An endpoint no event is for (its type filter matches none): its state is read and enabled below.
        configuration.webhooks = [try WebhookEndpoint(name: "app", url: "http://127.0.0.1:9/hook", secret: "plain-secret-0123456789", types: ["none"])]
        let (app, _) = TestData.application(configuration, ledger: try TestData.sqliteLedger(configuration: configuration))
        let recorder = ExchangeRecorder()
        let receipt = try TestData.receipt(transactionPrefix: "81000000")
        let renewal = try TestData.jwsMinter.mint(json: JWSPayloads.renewalInfo(signedDate: Date(), originalTransactionId: "8100000000000010", productId: TestData.monthly))
        let signed = try TestData.signedTransaction(transactionId: "8100000000000010")
        let refund = try TestData.refund(transactionId: "8100000000000002")
        let fixture = Fixtures.bytes("receipts/revenuecat-ios-sandbox-2020-sha1-9iap.der")

        try await app.test(.live) { client in
            func call(_ method: HTTPRequest.Method, _ uri: String, _ template: String, key: String? = TestData.fullKey, body: ByteBuffer? = nil) async throws {
                let response = try await client.send(method, uri, key: key, body: body)
                recorder.record(method, template, response)
            }
            let receipts = "/v1/receipts/verify"
            try await call(.post, receipts, receipts, body: try TestData.verifyBody(receipt, account: "oa"))
            try await call(.post, receipts, receipts, body: try TestData.verifyBody(receipt, account: "oa"))
            try await call(.post, receipts, receipts, body: try TestData.verifyBody(receipt, account: "other"))
            try await call(.post, receipts, receipts, body: try TestData.verifyBody(Array("junk".utf8), account: "oa"))
            try await call(.post, receipts, receipts, body: ByteBuffer(string: "{"))
            try await call(.post, receipts, receipts, key: nil, body: ByteBuffer(string: "{}"))
            try await call(.post, receipts, receipts, key: TestData.readerKey, body: ByteBuffer(string: "{}"))
            try await call(.post, receipts, receipts, body: ByteBuffer(string: String(repeating: " ", count: 70_000)))

            let transactions = "/v1/transactions/verify"
            try await call(.post, transactions, transactions, body: try TestData.json(["signedTransaction": signed, "signedRenewalInfo": renewal, "account": "oa"]))
            try await call(.post, transactions, transactions, body: try TestData.json(["signedTransaction": "x.y.z", "account": "oa"]))
            try await call(.post, transactions, transactions, body: try TestData.json(["signedTransaction": signed]))

            let notifications = "/v1/notifications/apple"
            try await call(.post, notifications, notifications, key: nil, body: try TestData.json(["signedPayload": refund]))
            try await call(.post, notifications, notifications, key: nil, body: try TestData.json(["signedPayload": refund]))
            try await call(.post, notifications, notifications, key: nil, body: try TestData.json(["signedPayload": "a.b.c"]))
            try await call(.post, notifications, notifications, key: nil, body: try TestData.json([:]))

            let entitlements = "/v1/accounts/{account}/entitlements"
            try await call(.get, "/v1/accounts/oa/entitlements", entitlements)
            try await call(.get, "/v1/accounts/nobody/entitlements", entitlements, key: TestData.readerKey)
            try await call(.get, "/v1/accounts/%01/entitlements", entitlements)
            try await call(.get, "/v1/accounts/oa/entitlements", entitlements, key: nil)
            let entitlement = "/v1/accounts/{account}/entitlements/{entitlement}"
            try await call(.get, "/v1/accounts/oa/entitlements/premium", entitlement)
            try await call(.get, "/v1/accounts/oa/entitlements/gems", entitlement, key: TestData.readerKey)
            try await call(.get, "/v1/accounts/nobody/entitlements/premium", entitlement)
            try await call(.get, "/v1/accounts/oa/entitlements/nothing", entitlement)
            try await call(.get, "/v1/accounts/oa/entitlements/premium", entitlement, key: nil)
            let grants = "/v1/accounts/{account}/grants"
            let grantBody = try TestData.json(["entitlement": "premium", "duration": "P7D", "reason": "support", "idempotencyKey": "g-1"])
            try await call(.post, "/v1/accounts/oa/grants", grants, body: grantBody)
            try await call(.post, "/v1/accounts/oa/grants", grants, body: grantBody)
            try await call(.post, "/v1/accounts/oa/grants", grants, body: try TestData.json(["entitlement": "premium", "duration": "P8D", "reason": "support", "idempotencyKey": "g-1"]))
            try await call(.post, "/v1/accounts/oa/grants", grants, body: try TestData.json(["entitlement": "nothing", "duration": "P7D", "reason": "r", "idempotencyKey": "g-2"]))
            try await call(.post, "/v1/accounts/oa/grants", grants, body: try TestData.json(["entitlement": "premium", "reason": "r", "idempotencyKey": "g-3"]))
            try await call(.get, "/v1/accounts/oa/grants", grants)
            try await call(.get, "/v1/accounts/oa/grants", grants, key: TestData.readerKey)
            try await call(.get, "/v1/accounts/oa/entitlements/premium", entitlement)
            let grantList = try await client.send(.get, "/v1/accounts/oa/grants", key: TestData.fullKey)
            let grantId = try #require((try grantList.json["grants"] as? [[String: Any]])?.first?["id"] as? String)
            let revoke = "/v1/accounts/{account}/grants/{grant}/revoke"
            try await call(.post, "/v1/accounts/oa/grants/\(grantId)/revoke", revoke, body: try TestData.json(["reason": "done"]))
            try await call(.post, "/v1/accounts/oa/grants/nope/revoke", revoke, body: try TestData.json(["reason": "done"]))
            try await call(.post, "/v1/accounts/oa/grants/\(grantId)/revoke", revoke, body: try TestData.json([:]))

            let transfers = "/v1/accounts/{account}/transfers"
            let move = try TestData.json(["environment": "Test", "originalTransactionId": "8100000000000002", "reason": "support ticket 7"])
            try await call(.post, "/v1/accounts/ob/transfers", transfers, body: move)
            try await call(.post, "/v1/accounts/ob/transfers", transfers, body: move)
            try await call(.post, "/v1/accounts/ob/transfers", transfers, body: try TestData.json(["environment": "Test", "originalTransactionId": "nope", "reason": "r"]))
            try await call(.post, "/v1/accounts/ob/transfers", transfers, body: try TestData.json(["environment": "Staging", "originalTransactionId": "8100000000000002", "reason": "r"]))
            try await call(.post, "/v1/accounts/ob/transfers", transfers, body: try TestData.json(["environment": "Test", "originalTransactionId": "8100000000000002"]))
            try await call(.post, "/v1/accounts/ob/transfers", transfers, key: TestData.readerKey, body: move)

            let consume = "/v1/accounts/{account}/consumables/{productId}/consume"
            let coins = "/v1/accounts/oa/consumables/\(TestData.coins)/consume"
            try await call(.post, coins, consume, body: try TestData.json(["quantity": 2, "idempotencyKey": "oa-1"]))
            try await call(.post, coins, consume, body: try TestData.json(["quantity": 2, "idempotencyKey": "oa-1"]))
            try await call(.post, coins, consume, body: try TestData.json(["quantity": 99, "idempotencyKey": "oa-2"]))
            try await call(.post, coins, consume, body: try TestData.json(["quantity": 0, "idempotencyKey": "oa-3"]))
            try await call(.post, coins, consume, key: TestData.readerKey, body: try TestData.json(["idempotencyKey": "oa-4"]))

            let events = "/v1/events"
            try await call(.get, events, events)
            try await call(.get, "/v1/events?after=1&limit=2", events)
            try await call(.get, "/v1/events?after=999999", events)
            try await call(.get, "/v1/events?limit=0", events)
            try await call(.get, events, events, key: TestData.readerKey)
            let deliveries = "/v1/webhooks/deliveries"
            try await call(.get, deliveries, deliveries)
            try await call(.get, "/v1/webhooks/deliveries?status=bogus", deliveries)
            let redeliver = "/v1/webhooks/deliveries/{endpoint}/{sequence}/redeliver"
            try await call(.post, "/v1/webhooks/deliveries/app/999/redeliver", redeliver)
            try await call(.post, "/v1/webhooks/deliveries/app/x/redeliver", redeliver)
            try await call(.get, "/v1/webhooks/endpoints", "/v1/webhooks/endpoints")
            try await call(.get, "/v1/webhooks/endpoints", "/v1/webhooks/endpoints", key: TestData.readerKey)
            let enable = "/v1/webhooks/endpoints/{endpoint}/enable"
            try await call(.post, "/v1/webhooks/endpoints/app/enable", enable)
            try await call(.post, "/v1/webhooks/endpoints/nope/enable", enable)
            try await call(.post, "/v1/webhooks/endpoints/app/enable", enable, key: nil)
            // Live administration: endpoints and keys.
            let endpoint = "/v1/webhooks/endpoints/{endpoint}"
            let hooks = "/v1/webhooks/endpoints"
            try await call(.post, hooks, hooks, body: try TestData.json(["name": "made", "url": "http://127.0.0.1:9/made", "types": ["none"]]))
            try await call(.post, hooks, hooks, body: try TestData.json(["name": "made", "url": "http://127.0.0.1:9/made"]))
            try await call(.post, hooks, hooks, body: try TestData.json(["name": "bad", "url": "ftp://x/"]))
            try await call(.get, "/v1/webhooks/endpoints/made", endpoint)
            try await call(.get, "/v1/webhooks/endpoints/nope", endpoint)
            try await call(.patch, "/v1/webhooks/endpoints/made", endpoint, body: try TestData.json(["rotateSecret": true, "paused": true]))
            try await call(.patch, "/v1/webhooks/endpoints/made", endpoint, body: try TestData.json(["secret": "short"]))
            try await call(.patch, "/v1/webhooks/endpoints/nope", endpoint, body: try TestData.json(["paused": true]))
            try await call(.post, "/v1/webhooks/endpoints/made/test", "/v1/webhooks/endpoints/{endpoint}/test")
            try await call(.post, "/v1/webhooks/endpoints/nope/test", "/v1/webhooks/endpoints/{endpoint}/test")
            try await call(.delete, "/v1/webhooks/endpoints/made", endpoint)
            try await call(.delete, "/v1/webhooks/endpoints/made", endpoint)
            try await call(.post, "/v1/keys", "/v1/keys", body: try TestData.json(["name": "made", "permissions": ["events.read"], "rateLimit": ["requests": 1, "seconds": 60]]))
            try await call(.post, "/v1/keys", "/v1/keys", body: try TestData.json(["name": "made", "permissions": ["events.read"]]))
            try await call(.post, "/v1/keys", "/v1/keys", key: TestData.readerKey, body: try TestData.json(["name": "x", "permissions": ["events.read"]]))
            try await call(.post, "/v1/keys", "/v1/keys", body: try TestData.json(["name": "x", "permissions": ["nope"]]))
            try await call(.get, "/v1/keys", "/v1/keys")
            try await call(.post, "/v1/keys/made/revoke", "/v1/keys/{name}/revoke")
            try await call(.post, "/v1/keys/full/revoke", "/v1/keys/{name}/revoke")
            try await call(.post, "/v1/keys/nope/revoke", "/v1/keys/{name}/revoke")
            try await call(.get, "/v1/sync/status", "/v1/sync/status")
            try await call(.get, "/v1/sync/status", "/v1/sync/status", key: TestData.readerKey)
            let refresh = "/v1/accounts/{account}/refresh"
            try await call(.post, "/v1/accounts/oa/refresh", refresh)
            try await call(.post, "/v1/accounts/oa/refresh", refresh, key: TestData.readerKey)
            try await call(.post, "/v1/sync/test-notification", "/v1/sync/test-notification")

            try await call(.post, "/verifyReceipt", "/verifyReceipt", body: try TestData.json(["receipt-data": Base64.encode(receipt)]))
            try await call(.post, "/verifyReceipt", "/verifyReceipt", body: try TestData.json(["receipt-data": "***"]))
            try await call(.post, "/verifyReceipt", "/verifyReceipt", key: nil, body: try TestData.json(["receipt-data": "***"]))
            if let fixture {
                try await call(.post, "/verifyReceipt", "/verifyReceipt", body: try TestData.json(["receipt-data": Base64.encode(fixture), "exclude-old-transactions": true]))
            }
            try await call(.get, "/verifyReceipt", "/verifyReceipt", key: nil)

            for path in ["/healthz", "/readyz", "/metrics", "/openapi.yaml"] {
                try await call(.get, path, path, key: nil)
            }
        }
        let file = try TemporaryFiles.directory("exchanges").appendingPathComponent("exchanges.json")
        try recorder.write(to: file)
        let result = try await runBlocking { try OpenAPITools.run(["python3", OpenAPITools.script, OpenAPITools.specification, file.path]) }
        #expect(result.status == 0, Comment(rawValue: result.output))
        #expect(result.output.contains("checked \(recorder.count) replies"), Comment(rawValue: result.output))
    }
}

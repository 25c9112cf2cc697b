import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Logging
import NIOCore
import StoreGateCore
import StoreGateEvents
import StoreGateLedger
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Testing

@testable import StoreGateServer

/// The products, accounts, keys and proofs the server tests use.
enum TestData {
    static let bundleId = "com.example.storegate"
    static let coins = "com.example.storegate.coins"
    static let pro = "com.example.storegate.pro"
    static let monthly = "com.example.storegate.monthly"
    static let fixtureBundleId = "com.revenuecat.sampleapp"

    /// A key with every permission.
    static let fullKey = "full-key-0123456789abcdef"
    /// A key that may only read entitlements.
    static let readerKey = "reader-key-0123456789abcdef"

    static let created = Date(timeIntervalSince1970: 1_700_000_000)

    static var receiptAuthority: TestCertificateAuthority {
        get throws { try TestCertificateAuthority.shared(.rsa2048) }
    }

    static var jwsMinter: JWSMinter {
        get throws { try JWSMinter.shared() }
    }

    /// A configuration trusting the test authorities, accepting the `Test` environment.
    static func configuration(
        apps: [ServerConfiguration.App] = [.init(bundleId: bundleId), .init(bundleId: fixtureBundleId)],
        environments: Set<AppStoreEnvironment> = [.production, .sandbox, .test]
    ) throws -> ServerConfiguration {
        var configuration = ServerConfiguration()
        configuration.host = "127.0.0.1"
        configuration.port = 0
        configuration.apps = apps
        configuration.environments = environments
        var trust = TrustStore()
        try trust.addOptInAnchor(der: try receiptAuthority.root.der)
        try trust.addOptInAnchor(der: try jwsMinter.authority.root.der)
        configuration.trustStore = trust
        var keys = APIKeyStore()
        try keys.add(name: "full", secret: fullKey)
        try keys.add(name: "reader", secret: readerKey, permissions: [.entitlementsRead])
        configuration.apiKeys = keys
        // The tests' webhook receivers listen on loopback (STOREGATE_WEBHOOK_ALLOW_PRIVATE=1).
        configuration.webhookAddressPolicy = .allowingEveryAddress
        configuration.catalog = ProductCatalog(products: [
            coins: .init(type: .consumable),
            pro: .init(type: .nonConsumable),
        ])
        return configuration
    }

    /// ``configuration(apps:environments:)`` with the app's entitlements in the catalog:
    /// "premium" from the pro purchase or the monthly subscription, "gems" counting coins (10 a
    /// unit). Its application announces entitlement changes in the event stream.
    static func entitlementsConfiguration() throws -> ServerConfiguration {
        var configuration = try self.configuration()
        configuration.catalog.entitlements = [
            "premium": EntitlementDefinition(products: [pro, monthly]),
            "gems": EntitlementDefinition(currency: [coins: 10]),
        ]
        return configuration
    }

    /// A receipt for `bundleId` with the given purchases (coins ×5 and pro by default).
    static func receipt(
        bundleId: String = bundleId,
        receiptType: String = "ProductionSandbox",
        purchases: [ReceiptMinter.Purchase]? = nil,
        transactionPrefix: String = "10000000"
    ) throws -> [UInt8] {
        var payload = ReceiptMinter.Payload()
        payload.bundleId = bundleId
        payload.receiptType = receiptType
        payload.creationDate = created
        payload.purchases = purchases ?? [
            .init(productId: coins, transactionId: transactionPrefix + "00000001", purchaseDate: created.addingTimeInterval(-60), quantity: 5),
            .init(productId: pro, transactionId: transactionPrefix + "00000002", purchaseDate: created.addingTimeInterval(-60)),
        ]
        return try ReceiptMinter(authority: try receiptAuthority).mint(payload)
    }

    /// A signed transaction for a monthly subscription.
    static func signedTransaction(transactionId: String = "2000000000000001", bundleId: String = bundleId, signedDate: Date = Date()) throws -> String {
        try jwsMinter.mint(json: JWSPayloads.transaction(
            bundleId: bundleId, signedDate: signedDate, transactionId: transactionId,
            originalTransactionId: transactionId, productId: monthly
        ))
    }

    /// A REFUND notification for the non-consumable `transactionId` purchased at `created - 60`.
    static func refund(transactionId: String, uuid: String = UUID().uuidString.lowercased(), bundleId: String = bundleId) throws -> String {
        let minter = try jwsMinter
        var transaction = JWSPayloads.transaction(
            bundleId: bundleId, signedDate: created.addingTimeInterval(3600), transactionId: transactionId,
            originalTransactionId: transactionId, productId: pro, type: "Non-Consumable"
        )
        let purchased = JWSPayloads.milliseconds(created.addingTimeInterval(-60))
        transaction["purchaseDate"] = purchased
        transaction["originalPurchaseDate"] = purchased
        transaction["revocationDate"] = JWSPayloads.milliseconds(created.addingTimeInterval(3600))
        transaction["revocationReason"] = 0
        return try minter.mint(json: JWSPayloads.notification(
            type: "REFUND", bundleId: bundleId, signedDate: created.addingTimeInterval(3600),
            signedTransactionInfo: try minter.mint(json: transaction), notificationUUID: uuid
        ))
    }

    /// JSON bytes of an object.
    static func json(_ object: [String: Any]) throws -> ByteBuffer {
        ByteBuffer(bytes: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]))
    }

    static func verifyBody(_ receipt: [UInt8], account: String, expectations: [String: Any]? = nil) throws -> ByteBuffer {
        var object: [String: Any] = ["receipt": Base64.encode(receipt), "account": account]
        if let expectations { object["expectations"] = expectations }
        return try json(object)
    }

    /// A fresh SQLite ledger file in a temporary directory.
    static func sqliteLedger(configuration: ServerConfiguration) throws -> SQLiteLedger {
        let directory = try TemporaryFiles.directory("server-tests")
        return try SQLiteLedger(
            path: directory.appendingPathComponent("ledger.sqlite").path,
            configuration: LedgerConfiguration(catalog: configuration.catalog, accountTokenPolicy: configuration.accountTokenPolicy)
        )
    }

    /// An application on an in-memory ledger (or the given one).
    static func application(
        _ configuration: ServerConfiguration,
        ledger: (any Ledger)? = nil,
        metrics: ServerMetrics = ServerMetrics()
    ) -> (StoreGateApplication, any Ledger) {
        let ledger = ledger ?? InMemoryLedger(configuration: LedgerConfiguration(catalog: configuration.catalog))
        return (application(configuration, opened: OpenedLedger(ledger), metrics: metrics), ledger)
    }

    /// An application on a ledger ``LedgerOpener`` opened: its services run and its
    /// preparation finishes when a test drives the application.
    static func application(
        _ configuration: ServerConfiguration,
        opened: OpenedLedger,
        metrics: ServerMetrics = ServerMetrics()
    ) -> StoreGateApplication {
        var logger = Logger(label: "storegate.tests")
        logger.logLevel = .critical
        return buildApplication(configuration: configuration, opened: opened, metrics: metrics, logger: logger)
    }
}

/// Request helpers.
extension TestClientProtocol {
    /// Sends a request with an optional bearer key and JSON body.
    @discardableResult
    func send(_ method: HTTPRequest.Method, _ uri: String, key: String? = nil, body: ByteBuffer? = nil, headers extra: HTTPFields = [:]) async throws -> TestResponse {
        var headers = extra
        if let key { headers[.authorization] = "Bearer \(key)" }
        if body != nil { headers[.contentType] = "application/json" }
        return try await execute(uri: uri, method: method, headers: headers, body: body)
    }
}

extension TestResponse {
    /// The body as a JSON object.
    var json: [String: Any] {
        get throws {
            let object = try JSONSerialization.jsonObject(with: Data(body.readableBytesView))
            guard let dictionary = object as? [String: Any] else {
                throw TestFailure("the body is not a JSON object: \(String(buffer: body))")
            }
            return dictionary
        }
    }

    /// The error code of an error body.
    var code: String? {
        (try? json)?["code"] as? String
    }

    var text: String { String(buffer: body) }
}

/// A failure of the test's own set-up.
struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Reads nested members: `value(json, "entitlements", "consumables")`.
func member(_ object: Any?, _ path: String...) -> Any? {
    var current = object
    for key in path {
        current = (current as? [String: Any])?[key]
    }
    return current
}

/// The product entry of `productId` in an entitlements object's list.
func product(_ entitlements: Any?, _ list: String, _ productId: String) -> [String: Any]? {
    (member(entitlements, list) as? [[String: Any]])?.first { $0["productId"] as? String == productId }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP exchange over a plain socket, for requests the test clients cannot make (a
/// chunked body without Content-Length).
enum RawHTTP {
    /// Runs blocking socket work on its own thread, off Swift's cooperative pool.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }

    static func exchange(port: Int, request: String) throws -> String {
        #if canImport(Glibc)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestFailure("socket() failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestFailure("connect() failed") }
        // A wait, not a speed: CI runs every suite at once on two cores, and a reply may take seconds.
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        #if canImport(Glibc)
        let noSignal = Int32(MSG_NOSIGNAL)
        #else
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        let noSignal: Int32 = 0
        #endif
        let bytes = Array(request.utf8)
        var sent = 0
        while sent < bytes.count {
            let written = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, noSignal) }
            if written <= 0 { break }  // the server may answer 413 and close before reading everything
            sent += written
        }
        var reply: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { break }
            reply += buffer[0..<count]
        }
        return String(decoding: reply, as: UTF8.self)
    }
}

import ArgumentParser
import Foundation
import StoreGateCore
import StoreGateTestSupport

/// The demo data's names, shared by `storegate-dev demo` and the README's tour.
enum DemoData {
    static let bundleId = "com.example.storegate"
    static let coins = "com.example.storegate.coins"
    static let pro = "com.example.storegate.pro"
    static let monthly = "com.example.storegate.monthly"
    static let coinsTransaction = "1000000000000001"
    static let proTransaction = "1000000000000002"
    static let monthlyTransaction = "2000000000000001"

    /// Writes the test authorities' roots into `directory/trust`.
    static func writeTrust(_ directory: URL, receipts: TestCertificateAuthority, jws: TestCertificateAuthority) throws -> URL {
        let trust = directory.appendingPathComponent("trust")
        try FileManager.default.createDirectory(at: trust, withIntermediateDirectories: true)
        try Data(receipts.root.der).write(to: trust.appendingPathComponent("storegate-test-receipt-root.der"))
        try Data(jws.root.der).write(to: trust.appendingPathComponent("storegate-test-jws-root.der"))
        return trust
    }

    static func json(_ object: [String: Any]) throws -> Data {
        try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
    }
}

/// Everything these commands mint is signed by a fresh test certificate authority, which the
/// service trusts only when its root is put in the trust directory *and* the `test`
/// environment is accepted.
///
/// `storegate-dev demo --out DIR`: a trust directory, a product catalog and ready-to-post
/// request bodies for the README's five-minute tour.
struct DevDemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Write a test trust directory, a product catalog and request bodies for the curl tour."
    )

    @Option(help: "Directory to write into.")
    var out: String = "storegate-demo"

    @Option(help: "The customer account the request bodies name.")
    var account: String = "alice"

    func run() async throws {
        let directory = URL(fileURLWithPath: out)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let receiptAuthority = try TestCertificateAuthority(keyKind: .rsa2048, shape: .init(label: "StoreGate Demo"))
        let jwsAuthority = try TestCertificateAuthority(keyKind: .p256, shape: .init(label: "StoreGate Demo"))
        let trust = try DemoData.writeTrust(directory, receipts: receiptAuthority, jws: jwsAuthority)
        let purchased = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 - 3600).rounded(.down))

        var payload = ReceiptMinter.Payload()
        payload.bundleId = DemoData.bundleId
        payload.creationDate = Date().addingTimeInterval(-60)
        payload.purchases = [
            .init(productId: DemoData.coins, transactionId: DemoData.coinsTransaction, purchaseDate: purchased, quantity: 5),
            .init(productId: DemoData.pro, transactionId: DemoData.proTransaction, purchaseDate: purchased),
        ]
        let receipt = try ReceiptMinter(authority: receiptAuthority).mint(payload)

        let minter = JWSMinter(authority: jwsAuthority)
        let transaction = try minter.mint(json: JWSPayloads.transaction(
            bundleId: DemoData.bundleId, signedDate: Date().addingTimeInterval(-30),
            transactionId: DemoData.monthlyTransaction, originalTransactionId: DemoData.monthlyTransaction, productId: DemoData.monthly
        ))
        var refunded = JWSPayloads.transaction(
            bundleId: DemoData.bundleId, signedDate: Date(), transactionId: DemoData.proTransaction,
            originalTransactionId: DemoData.proTransaction, productId: DemoData.pro, type: "Non-Consumable"
        )
        refunded["purchaseDate"] = JWSPayloads.milliseconds(purchased)
        refunded["originalPurchaseDate"] = JWSPayloads.milliseconds(purchased)
        refunded["revocationDate"] = JWSPayloads.milliseconds(Date())
        refunded["revocationReason"] = 0
        let notification = try minter.mint(json: JWSPayloads.notification(
            type: "REFUND", bundleId: DemoData.bundleId, signedDate: Date(),
            signedTransactionInfo: try minter.mint(json: refunded), notificationUUID: UUID().uuidString.lowercased()
        ))

        let files: [(String, Data)] = [
            ("products.json", try DemoData.json([
                "products": [
                    DemoData.coins: ["type": "Consumable"],
                    DemoData.pro: ["type": "Non-Consumable"],
                ],
                // The app's entitlements: "pro" from the lifetime purchase or the monthly
                // subscription; "coins" counts the consumable, 10 per unit.
                "entitlements": [
                    "pro": ["products": [DemoData.pro, DemoData.monthly]],
                    "coins": ["currency": [DemoData.coins: 10]],
                ],
            ])),
            ("receipt.json", try DemoData.json(["receipt": Base64.encode(receipt), "account": account])),
            ("transaction.json", try DemoData.json(["signedTransaction": transaction, "account": account])),
            ("consume.json", try DemoData.json(["quantity": 2, "idempotencyKey": "order-1"])),
            ("notification-refund.json", try DemoData.json(["signedPayload": notification])),
        ]
        for (name, data) in files {
            try data.write(to: directory.appendingPathComponent(name))
        }
        print("""
            Wrote \(directory.path): trust/, products.json, receipt.json, transaction.json, consume.json, notification-refund.json
            Start the service with the demo's test anchors (proofs they sign report the Test environment):
              export STOREGATE_BUNDLE_IDS=\(DemoData.bundleId)
              export STOREGATE_TRUST_DIR=\(trust.path)
              export STOREGATE_ENVIRONMENTS=production,sandbox,test
              export STOREGATE_PRODUCTS_FILE=\(directory.appendingPathComponent("products.json").path)
            """)
    }
}

/// `storegate-dev mint-receipts`: many distinct receipts (one consumable purchase each, its own
/// transaction id) for the load test, one base64 receipt per line.
struct DevMintReceiptsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mint-receipts",
        abstract: "Mint distinct receipts, one base64 receipt per line, and write the test trust directory."
    )

    @Option(help: "How many receipts.")
    var count: Int = 10_000

    @Option(help: "File to write, one base64 receipt per line.")
    var out: String

    @Option(name: .customLong("trust-dir-out"), help: "Directory to write the test roots into (as trust/).")
    var trustDirectoryOut: String

    @Option(name: .customLong("bundle-id"), help: "The bundle id of the receipts.")
    var bundleId: String = DemoData.bundleId

    @Option(name: .customLong("product-id"), help: "The consumable each receipt buys.")
    var productId: String = DemoData.coins

    func run() async throws {
        guard count > 0 else { throw CLIError("--count must be positive") }
        let authority = try TestCertificateAuthority(keyKind: .rsa2048, shape: .init(label: "StoreGate Load"))
        let jwsAuthority = try TestCertificateAuthority.shared(.p256, label: "StoreGate Load")
        _ = try DemoData.writeTrust(URL(fileURLWithPath: trustDirectoryOut), receipts: authority, jws: jwsAuthority)
        let minter = ReceiptMinter(authority: authority)
        let workers = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let (bundleId, productId, count) = (self.bundleId, self.productId, self.count)
        let created = Date().addingTimeInterval(-60)
        let lines = try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            for worker in 0..<workers {
                group.addTask {
                    var lines: [String] = []
                    var index = worker
                    while index < count {
                        var payload = ReceiptMinter.Payload()
                        payload.bundleId = bundleId
                        payload.creationDate = created
                        payload.purchases = [
                            .init(productId: productId, transactionId: String(3_000_000_000_000_000 + index), purchaseDate: created, quantity: 1),
                        ]
                        lines.append(Base64.encode(try minter.mint(payload)))
                        index += workers
                    }
                    return (worker, lines)
                }
            }
            var byWorker: [Int: [String]] = [:]
            for try await (worker, lines) in group { byWorker[worker] = lines }
            return (0..<workers).flatMap { byWorker[$0] ?? [] }
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: out))
        print("minted \(lines.count) receipts into \(out); trust roots in \(trustDirectoryOut)/trust")
    }
}

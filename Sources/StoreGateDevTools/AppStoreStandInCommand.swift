import ArgumentParser
import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Crypto

/// `storegate-dev stand-in`: run StoreGate's local stand-in for Apple, to try
/// `storegate appstore …` and `verify --remote` without Apple's network.
struct AppStoreStandInCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "stand-in",
        abstract: "Run a local stand-in for Apple's verifyReceipt and App Store Server API (development only).",
        discussion: """
            Serves on 127.0.0.1 until interrupted, prints the environment variables and options \
            that point `storegate appstore` and `storegate verify --remote` at it, and writes its \
            test certificate authority into --trust-dir-out (pass that directory as --trust-dir: \
            payloads it signs report the Test environment, never Production).
            """
    )

    @Option(help: "The port on 127.0.0.1 (0: any free port).")
    var port: Int = 0

    @Option(name: .customLong("bundle-id"), help: "The app the stand-in's data is for.")
    var bundleId: String = "com.example.storegate"

    @Option(name: .customLong("receipt"), help: "App receipt files (DER or base64) the stand-in's verifyReceipt knows, as sandbox receipts; their replies are built from the receipts' own contents.")
    var receipts: [String] = []

    @Option(name: .customLong("trust-dir-out"), help: "Where to write the key (.p8) and the test CA root.")
    var outputDirectory: String = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-stand-in").path

    func run() async throws {
        let directory = URL(fileURLWithPath: outputDirectory)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: bundleId)
        let keyPath = directory.appendingPathComponent("stand-in-key.p8").path
        guard FileManager.default.createFile(atPath: keyPath, contents: Data(credentials.privateKey.pemRepresentation.utf8), attributes: [.posixPermissions: 0o600]) else {
            throw CLIError("could not write \(keyPath)")
        }
        let minter = try JWSMinter.shared(label: "StoreGate Stand-in")
        let trustDirectory = directory.appendingPathComponent("trust")
        try FileManager.default.createDirectory(at: trustDirectory, withIntermediateDirectories: true)
        let rootPath = trustDirectory.appendingPathComponent("stand-in-root.der").path
        guard FileManager.default.createFile(atPath: rootPath, contents: Data(minter.authority.root.der)) else {
            throw CLIError("could not write \(rootPath)")
        }

        var known: [(base64: String, reply: VerifyReceiptResponse)] = []
        for path in receipts {
            guard let contents = FileManager.default.contents(atPath: path) else {
                throw CLIError("\(path): cannot be read")
            }
            // DER as it is, or the base64 text an app sends.
            let der = contents.first == 0x30 ? Array(contents) : try UnverifiedReceipt.der(base64: String(decoding: contents, as: UTF8.self))
            known.append((Base64.encode(der), try Self.reply(for: der)))
        }
        let registered = known
        let bundleId = self.bundleId
        let port = self.port
        try await AppleStandIn.run(port: port) { standIn in
            standIn.setServerAPIAccount(account)
            try Self.seed(standIn, minter: minter, bundleId: bundleId)
            for receipt in registered {
                standIn.registerReceipt(receipt.base64, environment: .sandbox, reply: receipt.reply)
            }
            let banner = """
                StoreGate Apple stand-in on \(standIn.baseURL) (Ctrl-C to stop)
                  export STOREGATE_APPSTORE_KEY_ID=\(credentials.keyId)
                  export STOREGATE_APPSTORE_ISSUER_ID=\(credentials.issuerId)
                  export STOREGATE_APPSTORE_PRIVATE_KEY_FILE=\(keyPath)
                  export STOREGATE_BUNDLE_ID=\(bundleId)
                  export STOREGATE_APPSTORE_API_URL=\(standIn.baseURL)
                  storegate appstore history 2000000000000001 --environment sandbox --trust-dir \(trustDirectory.path)
                  storegate appstore app-transaction 2000000000000001 --environment sandbox --trust-dir \(trustDirectory.path)
                  storegate appstore extend 2000000000000001 --days 7 --reason service-issue-or-outage --environment sandbox
                  storegate appstore extend-all --product com.example.storegate.monthly --days 3 --reason other --request-id outage-1 --environment sandbox
                  storegate appstore extension-status outage-1 --product com.example.storegate.monthly --environment sandbox
                  storegate appstore finish-transaction 2000000000000099 --environment sandbox
                  storegate verify RECEIPT --bundle-id ID --remote --apple-endpoint \(standIn.baseURL)
                """
            FileHandle.standardOutput.write(Data((banner + "\n").utf8))
            while !Task.isCancelled {
                try await Task.sleep(for: .seconds(3600))
            }
        }
    }

    /// Demo data: one customer with five monthly renewals (one refunded, the subscription
    /// active for 20 more days and extendable), a consumable, an order, statuses, the app
    /// transaction.
    static func seed(_ standIn: AppleStandIn, minter: JWSMinter, bundleId: String) throws {
        let ids = (1...5).map { "200000000000000\($0)" }
        var signed: [String] = []
        for (index, id) in ids.enumerated() {
            let date = Date(timeIntervalSince1970: 1_700_000_000 + Double(index) * 2_592_000)
            signed.append(try minter.mint(json: JWSPayloads.transaction(bundleId: bundleId, signedDate: date, transactionId: id, originalTransactionId: ids[0])))
        }
        let renewal = try minter.mint(json: JWSPayloads.renewalInfo(originalTransactionId: ids[0]))
        let appTransaction = try minter.mint(json: JWSPayloads.appTransaction(bundleId: bundleId, signedDate: Date()))
        let coins = try minter.mint(json: JWSPayloads.transaction(
            bundleId: bundleId, transactionId: "2000000000000099", originalTransactionId: "2000000000000099",
            productId: "com.example.storegate.coins", type: "Consumable", quantity: 3
        ))
        for environment in [AppStoreEnvironment.production, .sandbox] {
            standIn.updateServerAPIData(environment, bundleId: bundleId) { data in
                for (id, jws) in zip(ids, signed) { data.transactions[id] = jws }
                data.transactions["2000000000000099"] = coins
                for id in ids { data.history[id] = signed + [coins] }
                data.historyPageSize = 2
                data.statuses[ids[0]] = [(group: "21000001", subscriptions: [
                    .init(status: 1, originalTransactionId: ids[0], signedTransactionInfo: signed[4], signedRenewalInfo: renewal),
                ])]
                data.orders["MQ8ZX7YP2A"] = [coins]
                for id in ids { data.refunds[id] = [signed[2]] }
                for id in ids + ["2000000000000099", "704000000000000001"] { data.appTransactions[id] = appTransaction }
                data.purchases[ids[0]] = .init(
                    productId: "com.example.storegate.monthly", transactionIds: Array(ids.dropFirst()),
                    expiresDate: Date().addingTimeInterval(20 * 86_400), webOrderLineItemId: "2000000010000001"
                )
                data.purchases["2000000000000099"] = .init(productId: "com.example.storegate.coins")
            }
        }
    }

    /// The reply Apple would give for a receipt: its own contents, decoded (not verified).
    static func reply(for der: [UInt8]) throws -> VerifyReceiptResponse {
        let receipt = try UnverifiedReceipt(der: der).receipt
        return VerifyReceiptResponse(
            status: .valid,
            environment: .sandbox,
            receipt: VerifyReceiptReceipt(
                receiptType: receipt.receiptType,
                bundleId: receipt.bundleId,
                applicationVersion: receipt.appVersion,
                originalApplicationVersion: receipt.originalAppVersion,
                receiptCreationDate: receipt.creationDate,
                originalPurchaseDate: receipt.originalPurchaseDate,
                inApp: receipt.inAppPurchases.map {
                    VerifyReceiptTransaction(
                        quantity: $0.quantity,
                        productId: $0.productId,
                        transactionId: $0.transactionId,
                        originalTransactionId: $0.originalTransactionId,
                        purchaseDate: $0.purchaseDate
                    )
                }
            )
        )
    }
}

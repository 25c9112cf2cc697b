import ArgumentParser
import Foundation
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateEvents
import StoreGateHTTP
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite

/// `storegate-dev ledger-stress` (hidden): drives a ledger from a separate process for the
/// ledger's crash and multi-process tests.
///
/// - `record`: records `--count` consumable purchases one by one and prints `ack <id>` (flushed)
///   after each call returns — every printed id was acknowledged as stored.
/// - `consume`: fires `--count` concurrent one-unit consumptions and prints one JSON line
///   `{"consumed":…,"refused":…,"failed":…}`.
/// - `deliver`: runs the webhook deliveries of one endpoint until killed (the crash test of
///   the deliverer), with short timeouts and leases.
struct LedgerStressCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ledger-stress",
        abstract: "Drive a ledger from a separate process (for StoreGate's own tests).",
        shouldDisplay: false,
        subcommands: [Record.self, Consume.self, Deliver.self]
    )

    static let bundleId = "com.example.storegate.stress"

    /// Where the ledger is.
    struct Target: ParsableArguments {
        @Option(help: "A SQLite ledger file.")
        var sqlite: String?

        @Option(name: .customLong("postgres-url"), help: "A PostgreSQL URL.")
        var postgresURL: String?

        func open() async throws -> any Ledger {
            switch (sqlite, postgresURL) {
            case (let path?, nil): return try SQLiteLedger(path: path)
            case (nil, let url?): return try await PostgresLedger.connect(url: url, maximumConnections: 16)
            default: throw CLIError("give exactly one of --sqlite and --postgres-url")
            }
        }
    }

    struct Record: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Record consumable purchases, acknowledging each on standard output.")

        @OptionGroup var target: Target
        @Option(help: "The account recording them.") var account: String
        @Option(help: "Transaction ids are PREFIX-0, PREFIX-1, …") var prefix: String
        @Option(help: "How many.") var count: Int

        func run() async throws {
            let ledger = try await target.open()
            let owner = try AccountID(account)
            for index in 0..<count {
                let id = "\(prefix)-\(index)"
                let transaction = LedgerStressCommand.transaction(
                    id, original: id, product: "coins", type: .consumable, date: Date(timeIntervalSince1970: 1_700_000_000 + Double(index))
                )
                let proof = VerifiedProof(
                    kind: .signedTransaction, environment: .production, bundleId: LedgerStressCommand.bundleId,
                    signedDate: transaction.signedDate, transactions: [transaction], rawProof: Array(id.utf8)
                )
                try await ledger.record(proof, for: owner)
                LedgerStressCommand.emit("ack \(id)")
            }
            await ledger.close()
        }
    }

    struct Deliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Deliver the ledger's events to one webhook endpoint until killed.")

        @OptionGroup var target: Target
        @Option(help: "The endpoint's URL.") var url: String
        @Option(help: "The endpoint's signing secret.") var secret: String
        @Option(help: "The endpoint's name.") var endpoint = "receiver"
        @Option(help: "Each attempt's timeout, milliseconds.") var attemptTimeoutMs = 2000
        @Option(help: "How long a claim outlives its attempt, milliseconds.") var leaseMarginMs = 500
        @Option(help: "The first retry's delay, milliseconds.") var firstRetryMs = 100

        func run() async throws {
            let ledger = try await target.open()
            let store = ledger
            var policy = WebhookDeliveryPolicy()
            policy.attemptTimeout = .milliseconds(attemptTimeoutMs)
            policy.leaseMargin = .milliseconds(leaseMarginMs)
            policy.firstRetry = .milliseconds(firstRetryMs)
            policy.maximumRetryInterval = .milliseconds(firstRetryMs * 4)
            policy.pollInterval = .milliseconds(20)
            var transportConfiguration = AsyncHTTPClientTransport.Configuration()
            transportConfiguration.readTimeout = policy.attemptTimeout
            var logger = Logger(label: "storegate.stress.deliver")
            logger.logLevel = .error
            let transport = AsyncHTTPClientTransport(configuration: transportConfiguration, logger: logger)
            // The receiver is the developer's own, usually on this host: no address policy.
            let service = WebhookDeliveryService(
                store: store, endpoints: [try WebhookEndpoint(name: endpoint, url: url, secret: secret)], transport: transport,
                policy: policy, addressPolicy: .allowingEveryAddress, logger: logger
            )
            LedgerStressCommand.emit("delivering")
            try await service.run()
        }
    }

    struct Consume: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Consume one unit, many times at once.")

        @OptionGroup var target: Target
        @Option(help: "Whose balance.") var account: String
        @Option(help: "The consumable.") var product: String
        @Option(help: "How many concurrent consumptions.") var count: Int
        @Option(help: "Idempotency keys are PREFIX-0, PREFIX-1, …") var keyPrefix: String

        func run() async throws {
            let ledger = try await target.open()
            let owner = try AccountID(account)
            let product = self.product
            let keyPrefix = self.keyPrefix
            let outcomes = await withTaskGroup(of: String.self) { group in
                for index in 0..<count {
                    group.addTask {
                        do {
                            _ = try await ledger.consume(product, quantity: 1, idempotencyKey: "\(keyPrefix)-\(index)", for: owner, at: Date())
                            return "consumed"
                        } catch let error as LedgerError where error.code == .insufficientBalance {
                            return "refused"
                        } catch {
                            return "failed"
                        }
                    }
                }
                var counts: [String: Int] = [:]
                for await outcome in group { counts[outcome, default: 0] += 1 }
                return counts
            }
            await ledger.close()
            LedgerStressCommand.emit(#"{"consumed":\#(outcomes["consumed"] ?? 0),"refused":\#(outcomes["refused"] ?? 0),"failed":\#(outcomes["failed"] ?? 0)}"#)
        }
    }

    /// Writes one line to standard output at once (no buffering), so a killed process has
    /// printed exactly what it acknowledged.
    static func emit(_ line: String) {
        let bytes = Array((line + "\n").utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
            guard written > 0 else { return }
            offset += written
        }
    }

    static func account(_ raw: String) throws -> AccountID {
        try AccountID(raw)
    }

    static func transaction(
        _ id: String, original: String, product: String, type: ProductType, date: Date, expires: Date? = nil, group: String? = nil,
        quantity: Int = 1
    ) -> VerifiedTransaction {
        VerifiedTransaction(
            environment: .production, bundleId: bundleId, transactionId: id, originalTransactionId: original,
            productId: product, productType: type, quantity: quantity, purchaseDate: date, originalPurchaseDate: date,
            expiresDate: expires, revocationDate: nil, revocationReason: nil, webOrderLineItemId: nil,
            subscriptionGroupIdentifier: group, appAccountToken: nil, isUpgraded: false, signedDate: date, source: .signedTransaction
        )
    }
}

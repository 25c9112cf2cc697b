import ArgumentParser
import Foundation
import Logging
import StoreGateLedger
import StoreGateServer
import StoreGateSync

/// `storegate analytics`: maintenance of the money and subscriber metrics (docs/analytics.md).
struct AnalyticsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "analytics",
        abstract: "Maintain the ledger's money and subscriber metrics.",
        discussion: "Metrics, formulas and the API: docs/analytics.md.",
        subcommands: [Rebuild.self]
    )

    /// `storegate analytics rebuild`: fills unknown money facts from stored proofs, then
    /// recomputes every daily rollup from the raw transactions.
    struct Rebuild: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Recompute the daily rollups from the raw transactions (after filling money facts from stored proofs).",
            discussion: """
                Opens the ledger the service's settings name (STOREGATE_DATABASE, STOREGATE_LEDGER_KEYS or \
                STOREGATE_LEDGER_KEYS_FILE to open stored proofs, STOREGATE_PRODUCTS_FILE), fills the money \
                facts of transactions recorded before StoreGate kept them from their stored proofs, then \
                replaces every rollup with a fresh computation in one transaction (recordings wait \
                meanwhile). Prints what it did as JSON. Safe to run on a live ledger, and again.
                """
        )

        @Option(help: "The ledger (STOREGATE_DATABASE): a SQLite path or a postgres:// URL.") var database: String?
        @Flag(name: .customLong("skip-backfill"), help: "Do not read stored proofs for unknown money facts.") var skipBackfill = false

        func run() async throws {
            var environment = ProcessInfo.processInfo.environment
            if let database { environment[ServerConfiguration.Setting.database.rawValue] = database }
            let configuration: ServerConfiguration
            do {
                configuration = try ServerConfiguration.load(environment: environment)
            } catch {
                throw CLIError(error.description)
            }
            var logger = Logger(label: "storegate.analytics")
            logger.logLevel = configuration.logLevel
            let opened: OpenedLedger
            do {
                opened = try LedgerOpener.open(configuration, logger: logger)
            } catch {
                throw CLIError(error.description)
            }
            let skip = skipBackfill
            do {
                let summary: [String: Int] = try await opened.use { [logger] ledger in
                    var backfill = MoneyFactsBackfill.Report()
                    if !skip {
                        backfill = try await MoneyFactsBackfill(ledger: ledger, logger: logger).run()
                    }
                    let rebuilt = try await ledger.rebuildRollups()
                    return [
                        "transactionsScanned": backfill.scanned, "moneyFactsFilled": backfill.filled,
                        "unknownReceiptOnly": backfill.receiptOnly, "unknownProofNotStored": backfill.proofNotStored,
                        "unknownNotInProof": backfill.notInProof, "families": rebuilt.families,
                        "transactions": rebuilt.transactions, "rollups": rebuilt.rollups,
                    ]
                }
                let data = try JSONSerialization.data(withJSONObject: summary, options: [.sortedKeys, .prettyPrinted])
                print(String(decoding: data, as: UTF8.self))
            } catch let error as LedgerError {
                throw CLIError("\(error.code): \(error.reason)")
            } catch let error as ConfigurationError {
                throw CLIError(error.description)
            }
        }
    }
}

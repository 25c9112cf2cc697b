import ArgumentParser

/// `storegate-dev bench [SUITE…]`: measure StoreGate on this machine (use a release build).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark verification and the ledger (build with -c release first).",
        discussion: "Suites: receipt, jws, ledger, events, console, sync, analytics. Without arguments: receipt and jws."
    )

    @Argument(help: "Suites to run: receipt, jws, ledger, events, console, sync, analytics.")
    var suites: [String] = []

    @Option(help: "Iterations per measurement.")
    var iterations: Int = 2000

    @Option(name: .customLong("postgres-url"), help: "ledger: benchmark this PostgreSQL database instead of a throwaway local server.")
    var postgresURL: String?

    @Option(name: .customLong("postgres-connections"), help: "ledger: the PostgreSQL connection pool's size (16 writers share it).")
    var postgresConnections: Int = 16

    @Option(help: "ledger, events, analytics: the backends to measure: sqlite, postgres or all.")
    var backend: BenchBackends = .all

    @Option(help: "analytics: transactions in the two-year story (one subscriber per ten).")
    var transactions: Int = 1_000_000

    @Option(help: "analytics: timed rounds per query (after two warm-up rounds).")
    var rounds: Int = 20

    @Option(help: "analytics: concurrent writers recording the story.")
    var writers: Int = 16

    @Option(name: .customLong("proof-bytes"), help: "analytics: the size of each raw proof stored (sealed).")
    var proofBytes: Int = 2048

    @Option(
        name: .customLong("ledger-file"),
        help: "analytics (sqlite): keep the recorded ledger in this SQLite file; when it exists, skip recording and time the queries on it."
    )
    var ledgerFile: String?

    func run() async throws {
        let chosen = suites.isEmpty ? ["receipt", "jws"] : suites
        for suite in chosen {
            switch suite {
            case "receipt", "receipts": try await ReceiptBenchmark.run(iterations: iterations)
            case "jws", "signed-data": try await SignedDataBenchmark.run(iterations: iterations)
            case "ledger":
                try await LedgerBenchmark.run(iterations: iterations, backends: backend, postgresURL: postgresURL, postgresConnections: postgresConnections)
            case "events":
                try await EventsBenchmark.run(iterations: iterations, backends: backend, postgresURL: postgresURL, postgresConnections: postgresConnections)
            case "console": try await ConsoleBenchmark.run(iterations: iterations)
            case "sync": try await SyncBenchmark.run(count: max(1000, iterations * 50))
            case "analytics":
                try await AnalyticsBenchmark.run(
                    transactions: transactions, rounds: rounds, writers: writers, backends: backend, postgresURL: postgresURL,
                    postgresConnections: postgresConnections, proofBytes: proofBytes, ledgerFile: ledgerFile
                )
            default: throw CLIError("unknown benchmark suite '\(suite)' (receipt, jws, ledger, events, console, sync, analytics)")
            }
        }
    }
}

/// The ledger backends a benchmark measures.
enum BenchBackends: String, ExpressibleByArgument, Sendable {
    case sqlite, postgres, all

    var includesSQLite: Bool { self != .postgres }
    var includesPostgres: Bool { self != .sqlite }
}

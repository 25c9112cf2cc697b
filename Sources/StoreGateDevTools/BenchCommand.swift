import Foundation
import ArgumentParser
import StoreGateLedger
import StoreGateEvents

/// `storegate-dev bench [SUITE…]`: measure StoreGate on this machine (use a release build).
struct BenchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Benchmark verification and the ledger (build with -c release first).",
        discussion: "Suites: receipt, jws, ledger, events, console, sync, analytics, write-costs, scale. Without arguments: receipt and jws."
    )

    @Argument(help: "Suites to run: receipt, jws, ledger, events, console, sync, analytics, write-costs, scale.")
    var suites: [String] = []

    @Option(help: "Iterations per measurement.")
    var iterations: Int = 2000

    @Option(
        name: .customLong("postgres-url"),
        help: """
            ledger, events, analytics: benchmark this PostgreSQL database instead of a throwaway local server; analytics: when it \
            already holds rollups, skip recording (and the rebuild) and time the queries on them.
            """
    )
    var postgresURL: String?

    @Option(name: .customLong("postgres-connections"), help: "ledger: the PostgreSQL connection pool's size (16 writers share it).")
    var postgresConnections: Int = 16

    @Option(help: "ledger, events, analytics: the backends to measure: sqlite, postgres or all.")
    var backend: BenchBackends = .all

    @Option(help: "analytics: transactions in the two-year story (one subscriber per ten; default 1000000); write-costs: the same story (default 100000).")
    var transactions: Int?

    @Option(
        help: """
            analytics: timed rounds per query, after two warm-up rounds (default 20); scale: timed rounds per size, after a warm-up \
            round, the sizes taken in turn, a figure's p50 the median of its rounds' p50s (default 5); write-costs: rounds, each \
            recording the story once per variant (default 3).
            """
    )
    var rounds: Int?

    @Option(help: "analytics, write-costs: concurrent writers recording the story.")
    var writers: Int = 16

    @Option(name: .customLong("proof-bytes"), help: "analytics, write-costs: the size of each raw proof stored (sealed).")
    var proofBytes: Int = 2048

    @Option(
        name: .customLong("ledger-file"),
        help: "analytics (sqlite): keep the recorded ledger in this SQLite file; when it exists, skip recording and time the queries on it."
    )
    var ledgerFile: String?

    @Flag(
        name: .customLong("compare-daily-read"),
        help: "analytics: also time each query through the daily read (the calculator bucketing every day's sums), as before the stores summed buckets."
    )
    var compareDailyRead = false

    @Option(help: "analytics: only these metrics (comma-separated names, as in GET /v1/analytics/{metric}); all by default.")
    var metrics: String?

    @Option(help: "scale: the ledger sizes to build, in transactions (one account per ten), comma-separated.")
    var sizes: String = "100000,1000000,10000000"

    @Option(help: "scale: operations measured per figure at each size (split over the rounds).")
    var samples: Int = 2000

    @Option(name: .customLong("sealed-proof-bytes"), help: "scale: the size of each raw proof stored sealed (AES-GCM); 0 keeps only digests, as without a key.")
    var sealedProofBytes: Int = 0

    @Option(name: .customLong("fail-above"), help: "scale: exit non-zero when a per-request p50 (not the console's pages, nor the account cache's lines) costs more than this many times its p50 at the smallest size.")
    var failAbove: Double?

    @Option(name: .customLong("pages-within"), help: "scale: exit non-zero when a console page's p50 at any size is above this many times its p95 at the smallest size (issue 31 holds the pages to 1).")
    var pagesWithin: Double?

    @Option(
        name: .customLong("keep"),
        help: "scale: build the SQLite ledgers in this folder (scale-<size>.sqlite) and keep them, e.g. to run `storegate serve` on one."
    )
    var keep: String?

    @Option(
        name: .customLong("sqlite-page-cache-mb"),
        help: "scale: SQLite's page cache per connection in MiB (default 2, as the service)."
    )
    var sqlitePageCacheMB: Int?

    @Option(name: .customLong("sqlite-mmap-mb"), help: "scale: MiB of the file each SQLite reader maps into memory (default 0, as the service).")
    var sqliteMmapMB: Int?

    @Option(name: .customLong("bulk-writers"), help: "scale: concurrent bulk writers building each ledger (default: SQLite 2, PostgreSQL 4).")
    var bulkWriters: Int?

    @Flag(
        name: .customLong("reuse"),
        help: "scale (sqlite): measure the ledgers a run with --keep left in that folder instead of building them (every size's file must be there)."
    )
    var reuse = false

    @Flag(
        name: .customLong("rollups-only"),
        help: "write-costs: run only the two variants issue 29's figure compares (everything, without rollups): more rounds in the same time."
    )
    var rollupsOnly = false

    @Option(
        name: .customLong("fold-every"),
        help: "write-costs: seconds between the background folds (default: the service's, RollupFoldService.defaultInterval)."
    )
    var foldEvery: Double?

    @Flag(name: .customLong("normal-path"), help: "scale: build the ledgers through the normal path (16 writers) instead of the bulk path, to compare.")
    var normalPath = false

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
                    transactions: transactions ?? 1_000_000, rounds: rounds ?? 20, writers: writers, backends: backend, postgresURL: postgresURL,
                    postgresConnections: postgresConnections, proofBytes: proofBytes, ledgerFile: ledgerFile,
                    compareDailyRead: compareDailyRead, metrics: try Self.analyticsMetrics(metrics)
                )
            case "write-costs":
                try await WriteCostBenchmark.run(WriteCostBenchmark.Settings(
                    transactions: transactions ?? 100_000, rounds: rounds ?? 3, writers: writers, backends: backend,
                    postgresURL: postgresURL, postgresConnections: postgresConnections, proofBytes: proofBytes,
                    rollupsOnly: rollupsOnly, foldInterval: foldEvery.map { .milliseconds(Int64($0 * 1000)) } ?? RollupFoldService.defaultInterval
                ))
            case "scale":
                try await ScaleBenchmark.run(ScaleBenchmark.Settings(
                    sizes: try Self.sizes(sizes), samples: samples, backends: backend, postgresURL: postgresURL,
                    postgresConnections: postgresConnections, proofBytes: sealedProofBytes, failAbove: failAbove, pagesWithin: pagesWithin,
                    normalPath: normalPath,
                    rounds: rounds ?? 5, keep: keep, reuse: reuse, sqlitePageCacheBytes: sqlitePageCacheMB.map { $0 << 20 },
                    sqliteMappedBytes: sqliteMmapMB.map { $0 << 20 }, bulkWriters: bulkWriters.map { max(1, $0) }
                ))
            default: throw CLIError("unknown benchmark suite '\(suite)' (receipt, jws, ledger, events, console, sync, analytics, write-costs, scale)")
            }
        }
    }
}

extension BenchCommand {
    /// `--sizes`: comma-separated transaction counts.
    /// The metrics `--metrics` names, or every metric.
    static func analyticsMetrics(_ names: String?) throws -> [AnalyticsMetric] {
        guard let names else { return AnalyticsMetric.allCases }
        return try names.split(separator: ",").map { name in
            guard let metric = AnalyticsMetric(rawValue: name.trimmingCharacters(in: .whitespaces)) else {
                throw CLIError("unknown metric '\(name)' (\(AnalyticsMetric.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return metric
        }
    }

    static func sizes(_ text: String) throws -> [Int] {
        let sizes = text.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces).replacingOccurrences(of: "_", with: "")) }
        guard !sizes.isEmpty, sizes.allSatisfy({ ($0 ?? 0) >= 100 }) else {
            throw CLIError("--sizes takes comma-separated transaction counts of at least 100 (got '\(text)')")
        }
        return sizes.compactMap { $0 }
    }
}

/// The ledger backends a benchmark measures.
enum BenchBackends: String, ExpressibleByArgument, Sendable {
    case sqlite, postgres, all

    var includesSQLite: Bool { self != .postgres }
    var includesPostgres: Bool { self != .sqlite }
}

import Foundation
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport

/// `storegate-dev bench rollups`: what keeping the analytics rollups costs recording (issue 29:
/// at most 5 %), measured by this build against itself with the rollups switched off
/// (``LedgerConfiguration/maintainsRollups``), so nothing else differs between the runs.
///
/// Each round records the two-year story (``AnalyticsWorkload``: priced purchases, renewals,
/// trials, upgrades, refunds and churn notifications, the mix that moves the most rollups)
/// into a fresh ledger twice, once with the rollups and once without, `writers` at a time; the
/// order alternates from round to round so that a machine growing busier or quieter favours
/// neither. Each run's throughput is printed, then each round's cost (1 − with ÷ without) and
/// the median over the rounds.
enum RollupCostBenchmark {
    struct Settings {
        var transactions: Int
        var rounds: Int
        var writers: Int
        var backends: BenchBackends
        var postgresURL: String?
        var postgresConnections: Int
        var proofBytes: Int
    }

    static func run(_ settings: Settings) async throws {
        print(
            "rollups (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores, load \(AnalyticsBenchmark.loadAverage()))"
        )
        let workload = AnalyticsWorkload(transactions: settings.transactions)
        print(
            "story: \(workload.transactions) transactions (\(workload.facts.count) facts) of \(workload.subscribers) subscribers, "
                + "\(settings.writers) writers, \(settings.rounds) rounds alternating with and without rollups"
        )
        let payload: [UInt8] = (0..<max(0, settings.proofBytes)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        var configuration = LedgerConfiguration(catalog: AnalyticsWorkload.catalog, encryption: try LedgerBenchmark.configuration().encryption)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-bench-rollups-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder

        if settings.backends.includesSQLite {
            try await compare("sqlite", settings: settings, workload: workload, payload: payload) { run, rollups in
                configuration.maintainsRollups = rollups
                let path = directory.appendingPathComponent("run-\(run).sqlite").path
                let ledger = try SQLiteLedger(path: path, configuration: configuration)
                return (ledger, {
                    await ledger.close()
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }  // best effort: a temporary file
                })
            }
        }
        guard settings.backends.includesPostgres else { return }
        // Each run needs a database of its own: a throwaway server gives them (fsync on).
        guard settings.postgresURL == nil else {
            print("postgres  skipped: bench rollups records into fresh databases of a throwaway server (run it without --postgres-url)")
            return
        }
        guard let (_, server) = try LedgerBenchmark.postgres(nil, database: "storegate_bench_rollups"), let server else { return }
        defer { server.stop() }
        try await compare("postgres", settings: settings, workload: workload, payload: payload) { run, rollups in
            configuration.maintainsRollups = rollups
            let url = try server.createDatabase("storegate_bench_rollups_\(run)")
            let ledger = try await PostgresLedger.connect(url: url, configuration: configuration, maximumConnections: max(1, settings.postgresConnections))
            return (ledger, { await ledger.close() })
        }
        print("(postgres: a throwaway local server, fsync on, \(settings.postgresConnections)-connection pool)")
    }

    /// Records the story `rounds` × 2 times into the ledgers `open` gives (a run number, with
    /// or without rollups) and prints each run and the rounds' costs.
    private static func compare(
        _ label: String, settings: Settings, workload: AnalyticsWorkload, payload: [UInt8],
        open: (Int, Bool) async throws -> (any Ledger, () async -> Void)
    ) async throws {
        var costs: [Double] = []
        var run = 0
        for round in 0..<max(1, settings.rounds) {
            var rates: [Bool: Double] = [:]
            for rollups in round % 2 == 0 ? [true, false] : [false, true] {
                let (ledger, close) = try await open(run, rollups)
                run += 1
                let (seconds, latencies) = try await workload.record(into: ledger, writers: max(1, settings.writers), payload: payload)
                await close()
                let rate = Double(workload.facts.count) / seconds
                rates[rollups] = rate
                print(
                    "\(label) round \(round + 1): \(rollups ? "with" : "without") rollups "
                        + String(
                            format: "%.0f facts/s, p50 %.2f ms, p99 %.2f ms, %.1f s",
                            rate, BenchSupport.median(latencies) / 1000, BenchSupport.percentile(latencies, 0.99) / 1000, seconds
                        ) + "; load \(AnalyticsBenchmark.loadAverage())"
                )
            }
            if let with = rates[true], let without = rates[false] { costs.append(1 - with / without) }
        }
        print(
            "\(label): the rollups cost recording "
                + costs.map { String(format: "%.1f %%", $0 * 100) }.joined(separator: ", ")
                + String(format: " per round; median %.1f %% (target ≤ 5 %%)", BenchSupport.median(costs.sorted()) * 100)
        )
    }
}

import Foundation
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport

/// `storegate-dev bench write-costs`: what the work a write does besides the facts costs
/// recording, each measured by this build against itself with that work switched off, so
/// nothing else differs between the runs: the analytics rollups (issue 29: at most 5 %;
/// ``LedgerConfiguration/maintainsRollups``) and the triggers that keep the console overview's
/// per-day counts (issue 31; dropped on SQLite, disabled on PostgreSQL).
///
/// Each round records the two-year story (``AnalyticsWorkload``: priced purchases, renewals,
/// trials, upgrades, refunds and churn notifications, the mix that moves the most rollups)
/// into a fresh ledger once per variant — everything, without rollups, without the triggers —
/// `writers` at a time, the variants' order rotating from round to round so that a machine
/// growing busier or quieter favours none. Each run's throughput is printed, then, per variant
/// left out, each round's cost (1 − everything ÷ without it) and the median over the rounds.
enum WriteCostBenchmark {
    struct Settings {
        var transactions: Int
        var rounds: Int
        var writers: Int
        var backends: BenchBackends
        var postgresURL: String?
        var postgresConnections: Int
        var proofBytes: Int
    }

    /// What a run leaves out.
    enum Variant: String, CaseIterable {
        case everything = "everything"
        case withoutRollups = "without rollups"
        case withoutTriggers = "without activity triggers"
    }

    static func run(_ settings: Settings) async throws {
        print(
            "write-costs (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores, load \(AnalyticsBenchmark.loadAverage()))"
        )
        let workload = AnalyticsWorkload(transactions: settings.transactions)
        print(
            "story: \(workload.transactions) transactions (\(workload.facts.count) facts) of \(workload.subscribers) subscribers, "
                + "\(settings.writers) writers, \(settings.rounds) rounds of \(Variant.allCases.map(\.rawValue).joined(separator: " / "))"
        )
        let payload: [UInt8] = (0..<max(0, settings.proofBytes)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let base = LedgerConfiguration(catalog: AnalyticsWorkload.catalog, encryption: try LedgerBenchmark.configuration().encryption)
        func configuration(_ variant: Variant) -> LedgerConfiguration {
            var configuration = base
            configuration.maintainsRollups = variant != .withoutRollups
            return configuration
        }

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-bench-write-costs-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder

        if settings.backends.includesSQLite {
            try await compare("sqlite", settings: settings, workload: workload, payload: payload) { run, variant in
                let path = directory.appendingPathComponent("run-\(run).sqlite").path
                let ledger = try SQLiteLedger(path: path, configuration: configuration(variant))
                if variant == .withoutTriggers { try await ledger.dropActivityTriggersForBenchmark() }
                return (ledger, {
                    await ledger.close()
                    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }  // best effort: a temporary file
                })
            }
        }
        guard settings.backends.includesPostgres else { return }
        // Each run needs a database of its own: a throwaway server gives them (fsync on).
        guard settings.postgresURL == nil else {
            print("postgres  skipped: bench write-costs records into fresh databases of a throwaway server (run it without --postgres-url)")
            return
        }
        guard let (_, server) = try LedgerBenchmark.postgres(nil, database: "storegate_bench_write_costs"), let server else { return }
        defer { server.stop() }
        try await compare("postgres", settings: settings, workload: workload, payload: payload) { run, variant in
            let url = try server.createDatabase("storegate_bench_write_costs_\(run)")
            let ledger = try await PostgresLedger.connect(
                url: url, configuration: configuration(variant), maximumConnections: max(1, settings.postgresConnections)
            )
            if variant == .withoutTriggers { try await ledger.disableActivityTriggersForBenchmark() }
            return (ledger, { await ledger.close() })
        }
        print("(postgres: a throwaway local server, fsync on, \(settings.postgresConnections)-connection pool)")
    }

    /// Records the story `rounds` times per variant into the ledgers `open` gives (a run
    /// number and the variant) and prints each run and the rounds' costs.
    private static func compare(
        _ label: String, settings: Settings, workload: AnalyticsWorkload, payload: [UInt8],
        open: (Int, Variant) async throws -> (any Ledger, () async -> Void)
    ) async throws {
        var costs: [Variant: [Double]] = [:]
        var run = 0
        let variants = Variant.allCases
        for round in 0..<max(1, settings.rounds) {
            var rates: [Variant: Double] = [:]
            for offset in variants.indices {
                let variant = variants[(round + offset) % variants.count]
                let (ledger, close) = try await open(run, variant)
                run += 1
                let (seconds, latencies) = try await workload.record(into: ledger, writers: max(1, settings.writers), payload: payload)
                await close()
                let rate = Double(workload.facts.count) / seconds
                rates[variant] = rate
                print(
                    "\(label) round \(round + 1): \(variant.rawValue) "
                        + String(
                            format: "%.0f facts/s, p50 %.2f ms, p99 %.2f ms, %.1f s",
                            rate, BenchSupport.median(latencies) / 1000, BenchSupport.percentile(latencies, 0.99) / 1000, seconds
                        ) + "; load \(AnalyticsBenchmark.loadAverage())"
                )
            }
            if let everything = rates[.everything] {
                for variant in variants where variant != .everything {
                    if let without = rates[variant] { costs[variant, default: []].append(1 - everything / without) }
                }
            }
        }
        for variant in variants where variant != .everything {
            let rounds = costs[variant] ?? []
            let what = variant == .withoutRollups ? "the rollups (target ≤ 5 %)" : "the activity triggers"
            print(
                "\(label): \(what) cost recording "
                    + rounds.map { String(format: "%.1f %%", $0 * 100) }.joined(separator: ", ")
                    + String(format: " per round; median %.1f %%", BenchSupport.median(rounds.sorted()) * 100)
            )
        }
    }
}

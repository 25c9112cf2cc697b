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
/// into a fresh ledger once per variant — everything, the rollups added in the write (as
/// before schema 17), without rollups, without the triggers — `writers` at a time, the
/// variants' order rotating from round to round so that a machine growing busier or quieter
/// favours none. With everything, the rollups' changes are queued and a folder runs beside the
/// writers every second, as `storegate serve`'s does; the run's time includes folding what is
/// left when the writers finish. Each run's throughput is printed, then each cost per round
/// (1 − the rate with the work ÷ the rate without it) and its median over the rounds.
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
        case rollupsInWrite = "rollups added in the write"
        case withoutRollups = "without rollups"
        case withoutTriggers = "without activity triggers"
    }

    /// The costs printed: a work's name, the variant with it and the variant without it.
    static let costs: [(work: String, with: Variant, without: Variant)] = [
        ("the rollups, queued and folded (target ≤ 5 %)", .everything, .withoutRollups),
        ("the rollups added in the write (schema 16)", .rollupsInWrite, .withoutRollups),
        ("the activity triggers", .everything, .withoutTriggers),
    ]

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
            configuration.queuesRollupChanges = variant != .rollupsInWrite
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
        var rounds: [[Variant: Double]] = []
        var run = 0
        let variants = Variant.allCases
        for round in 0..<max(1, settings.rounds) {
            var rates: [Variant: Double] = [:]
            for offset in variants.indices {
                let variant = variants[(round + offset) % variants.count]
                let (ledger, close) = try await open(run, variant)
                run += 1
                // The service's folder, beside the writers (a no-op when nothing is queued).
                let folder = Task {
                    while !Task.isCancelled {
                        _ = try? await ledger.foldAllRollupChanges(batch: 1_000)
                        try? await Task.sleep(for: .seconds(1))
                    }
                }
                var (seconds, latencies) = try await workload.record(into: ledger, writers: max(1, settings.writers), payload: payload)
                folder.cancel()
                _ = await folder.result
                let folding = BenchSupport.now()
                let left = try await ledger.foldAllRollupChanges()
                seconds += Double(BenchSupport.now() - folding) / 1e9
                await close()
                let rate = Double(workload.facts.count) / seconds
                rates[variant] = rate
                print(
                    "\(label) round \(round + 1): \(variant.rawValue) "
                        + String(
                            format: "%.0f facts/s, p50 %.2f ms, p99 %.2f ms, %.1f s",
                            rate, BenchSupport.median(latencies) / 1000, BenchSupport.percentile(latencies, 0.99) / 1000, seconds
                        ) + (left > 0 ? " (\(left) queued changes folded after the writers)" : "")
                        + "; load \(AnalyticsBenchmark.loadAverage())"
                )
            }
            rounds.append(rates)
        }
        for cost in costs {
            let each = rounds.compactMap { rates in rates[cost.with].flatMap { with in rates[cost.without].map { 1 - with / $0 } } }
            print(
                "\(label): \(cost.work) cost recording "
                    + each.map { String(format: "%.1f %%", $0 * 100) }.joined(separator: ", ")
                    + String(format: " per round; median %.1f %%", BenchSupport.median(each.sorted()) * 100)
            )
        }
    }
}

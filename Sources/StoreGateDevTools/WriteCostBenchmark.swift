import Foundation
import StoreGateCore
import StoreGateEvents
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Synchronization

/// `storegate-dev bench write-costs`: what the work a write does besides the facts costs
/// recording, each measured by this build against itself with that work switched off, so
/// nothing else differs between the runs: the analytics rollups (issue 29: at most 5 %;
/// ``LedgerConfiguration/maintainsRollups``) and the triggers that keep the console overview's
/// per-day counts (issue 31; dropped on SQLite, disabled on PostgreSQL).
///
/// Each round records the two-year story (``AnalyticsWorkload``: priced purchases, renewals,
/// trials, upgrades, refunds and churn notifications, the mix that moves the most rollups)
/// into a fresh ledger per variant — everything, the rollups added in the write (as before
/// schema 17), without rollups, without the triggers, and on SQLite everything planned on the
/// writer thread alone — `writers` at a time, the variants taking turns slice by slice
/// (``compare(_:settings:workload:payload:postgresData:open:)``). With everything, the
/// rollups' changes are queued and folded as `storegate serve`'s folder does — every second,
/// beside the writes — and what a slice leaves queued is folded at its end, timed with it.
/// Each run's throughput is printed, then each cost per round (1 − the rate with the work ÷
/// the rate without it) and its median over the rounds, and the median and quartiles of the
/// cost per slice (the same facts recorded by both variants a moment apart). Each run's CPU
/// time is read too (the process's and, on PostgreSQL, the throwaway server's), and each cost
/// is printed again from it (1 − the CPU per fact without the work ÷ with it): what the work
/// takes from a machine whose cores are all busy, steadier from round to round than wall time.
enum WriteCostBenchmark {
    struct Settings {
        var transactions: Int
        var rounds: Int
        var writers: Int
        var backends: BenchBackends
        var postgresURL: String?
        var postgresConnections: Int
        var proofBytes: Int
        /// Only ``Variant/everything`` and ``Variant/withoutRollups`` (`--rollups-only`).
        var rollupsOnly = false
        /// Between the background folds (`--fold-every`; the service's by default).
        var foldInterval = RollupFoldService.defaultInterval
    }

    /// What a run leaves out.
    enum Variant: String, CaseIterable {
        case everything = "everything"
        case rollupsInWrite = "rollups added in the write"
        case withoutRollups = "without rollups"
        case withoutTriggers = "without activity triggers"
        /// SQLite only: everything, planned on the writer thread alone (no plan made ahead).
        case plannedOnWriter = "everything, planned on the writer"

        /// The variants a backend runs: all of them, or only the two of issue 29's figure.
        static func all(_ backend: String, rollupsOnly: Bool) -> [Variant] {
            if rollupsOnly { return [.everything, .withoutRollups] }
            return backend == "sqlite" ? allCases : allCases.filter { $0 != .plannedOnWriter }
        }
    }

    /// The costs printed: a work's name, the variant with it and the variant without it.
    static let costs: [(work: String, with: Variant, without: Variant)] = [
        ("the rollups, queued and folded (target ≤ 5 %)", .everything, .withoutRollups),
        ("the rollups added in the write (schema 16)", .rollupsInWrite, .withoutRollups),
        ("the activity triggers", .everything, .withoutTriggers),
        ("planning on the writer thread alone (SQLite, against planning ahead)", .plannedOnWriter, .everything),
    ]

    static func run(_ settings: Settings) async throws {
        print(
            "write-costs (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), "
                + "\(ProcessInfo.processInfo.activeProcessorCount) cores, load \(AnalyticsBenchmark.loadAverage()))"
        )
        let workload = AnalyticsWorkload(transactions: settings.transactions)
        print(
            "story: \(workload.transactions) transactions (\(workload.facts.count) facts) of \(workload.subscribers) subscribers, "
                + "\(settings.writers) writers, \(settings.rounds) rounds of "
                + (settings.rollupsOnly
                    ? Variant.all("sqlite", rollupsOnly: true).map(\.rawValue).joined(separator: " / ")
                    : "\(Variant.allCases.map(\.rawValue).joined(separator: " / ")) (the last on SQLite only)")
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
            try await compare("sqlite", settings: settings, workload: workload, payload: payload, postgresData: nil) { run, variant in
                let path = directory.appendingPathComponent("run-\(run).sqlite").path
                var options = SQLiteLedger.Options()
                if variant == .plannedOnWriter { options.planningAhead = .never }
                let ledger = try SQLiteLedger(path: path, configuration: configuration(variant), options: options)
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
        let data = server.directory.appendingPathComponent("data")
        try await compare("postgres", settings: settings, workload: workload, payload: payload, postgresData: data) { run, variant in
            let url = try server.createDatabase("storegate_bench_write_costs_\(run)")
            let ledger = try await PostgresLedger.connect(
                url: url, configuration: configuration(variant), maximumConnections: max(1, settings.postgresConnections)
            )
            if variant == .withoutTriggers { try await ledger.disableActivityTriggersForBenchmark() }
            return (ledger, { await ledger.close() })
        }
        print("(postgres: a throwaway local server, fsync on, \(settings.postgresConnections)-connection pool)")
    }

    /// The slices each round's story is cut into: every variant records a slice, in an order
    /// that rotates from slice to slice, before any records the next.
    static let slices = 20

    /// Records the story `rounds` times per variant into the ledgers `open` gives (a run
    /// number and the variant) and prints each run and the rounds' costs.
    ///
    /// The variants of a round record the story side by side: it is cut into ``slices``
    /// slices, and each variant records a slice (about a second) into its own ledger before any
    /// variant records the next, the variants' order rotating from slice to slice. A machine
    /// that grows busier or quieter over a round (the load of a shared 2-core machine moves by
    /// more than the costs measured within tens of seconds) then weighs on every variant alike.
    /// The round's folder (``BackgroundFolder``) folds the recording variant's queued changes
    /// every second, as the service's folder does, and a slice's time includes folding what it
    /// left queued; nothing else of a variant runs during another's slice except SQLite's
    /// checkpoints, which run on their own thread after commits.
    private static func compare(
        _ label: String, settings: Settings, workload: AnalyticsWorkload, payload: [UInt8], postgresData: URL?,
        open: (Int, Variant) async throws -> (any Ledger, () async -> Void)
    ) async throws {
        var rounds: [[Variant: Double]] = []
        var cpuRounds: [[Variant: Double]] = []
        // Each slice's time per variant, of every round: the variants recorded the same facts.
        var sliceTimes: [[Variant: Double]] = []
        var run = 0
        let variants = Variant.all(label, rollupsOnly: settings.rollupsOnly)
        let count = workload.facts.count
        let bounds = (0...slices).map { count * $0 / slices }
        for round in 0..<max(1, settings.rounds) {
            var ledgers: [Variant: (ledger: any Ledger, close: () async -> Void)] = [:]
            for variant in variants {
                ledgers[variant] = try await open(run, variant)
                run += 1
            }
            var seconds: [Variant: Double] = [:]
            var cpuSeconds: [Variant: Double] = [:]
            var latencies: [Variant: [Double]] = [:]
            var foldingSeconds: [Variant: Double] = [:]
            // The folder, as `storegate serve`'s (``RollupFoldService``, every second, beside
            // the writes): it folds what the ledger recording at that moment has queued.
            let folder = BackgroundFolder()
            let folding = Task { await folder.run(every: settings.foldInterval) }
            for slice in 0..<slices {
                var times: [Variant: Double] = [:]
                defer { sliceTimes.append(times) }
                for offset in variants.indices {
                    let variant = variants[(round + slice + offset) % variants.count]
                    guard let ledger = ledgers[variant]?.ledger else { continue }
                    let cpuBefore = BenchSupport.cpuSeconds(postgresData: postgresData)
                    folder.recording(variant, ledger)
                    let (recording, sliceLatencies) = try await workload.record(
                        bounds[slice]..<bounds[slice + 1], into: ledger, writers: max(1, settings.writers), payload: payload
                    )
                    folder.recording(nil, nil)
                    let foldStart = BenchSupport.now()
                    folder.add(try await ledger.foldAllRollupChanges(batch: 1_000), for: variant)
                    let folds = Double(BenchSupport.now() - foldStart) / 1e9
                    foldingSeconds[variant, default: 0] += folds
                    seconds[variant, default: 0] += recording + folds
                    times[variant] = recording + folds
                    cpuSeconds[variant, default: 0] += BenchSupport.cpuSeconds(postgresData: postgresData) - cpuBefore
                    latencies[variant, default: []] += sliceLatencies
                }
            }
            folding.cancel()
            await folding.value
            let folded = folder.folded
            var rates: [Variant: Double] = [:]
            var cpu: [Variant: Double] = [:]
            for variant in variants {
                await ledgers[variant]?.close()
                let rate = Double(count) / (seconds[variant] ?? .infinity)
                let cpuPerFact = (cpuSeconds[variant] ?? 0) / Double(count)
                rates[variant] = rate
                cpu[variant] = cpuPerFact
                let sorted = (latencies[variant] ?? []).sorted()
                print(
                    "\(label) round \(round + 1): \(variant.rawValue) "
                        + String(
                            format: "%.0f facts/s, p50 %.2f ms, p99 %.2f ms, %.1f s, cpu %.0f µs/fact",
                            rate, BenchSupport.median(sorted) / 1000, BenchSupport.percentile(sorted, 0.99) / 1000, seconds[variant] ?? 0,
                            cpuPerFact * 1e6
                        ) + ((folded[variant] ?? 0) > 0
                            ? String(
                                format: " (%d queued changes folded, %.2f s of it after the slices)", folded[variant] ?? 0, foldingSeconds[variant] ?? 0
                            ) : "")
                        + "; load \(AnalyticsBenchmark.loadAverage())"
                )
            }
            rounds.append(rates)
            cpuRounds.append(cpu)
        }
        func report(_ what: String, _ each: [Double]) {
            guard !each.isEmpty else { return }  // a variant this backend does not run
            print(
                "\(label): \(what) "
                    + each.map { String(format: "%.1f %%", $0 * 100) }.joined(separator: ", ")
                    + String(format: " per round; median %.1f %%", BenchSupport.median(each.sorted()) * 100)
            )
        }
        for cost in costs {
            // Throughput: 1 − rate with ÷ rate without. CPU: 1 − CPU per fact without ÷ with.
            report("\(cost.work) cost recording", rounds.compactMap { rates in rates[cost.with].flatMap { with in rates[cost.without].map { 1 - with / $0 } } })
            report("\(cost.work), by CPU,", cpuRounds.compactMap { cpu in cpu[cost.with].flatMap { with in cpu[cost.without].map { 1 - $0 / with } } })
            // Per slice: 1 − the time without ÷ the time with, the same facts recorded a moment
            // apart. A burst of load spoils the slices it falls on rather than a whole round.
            let perSlice = sliceTimes.compactMap { times in times[cost.with].flatMap { with in times[cost.without].map { 1 - $0 / with } } }.sorted()
            if !perSlice.isEmpty {
                print(
                    "\(label): \(cost.work), per slice: "
                        + String(
                            format: "median %.1f %%, quartiles %.1f–%.1f %% (%d slices)", BenchSupport.median(perSlice) * 100,
                            BenchSupport.percentile(perSlice, 0.25) * 100, BenchSupport.percentile(perSlice, 0.75) * 100, perSlice.count
                        )
                )
            }
        }
    }

    /// The round's folder: every `interval` it folds all that the ledger recording at that
    /// moment queued (the other variants' queues are empty: each slice ends with a fold), as
    /// the service's folder does beside the writes; what is left at a slice's end is folded
    /// then, and timed with the slice.
    final class BackgroundFolder: Sendable {
        private struct State {
            var current: (variant: Variant, ledger: any Ledger)?
            var folded: [Variant: Int] = [:]
        }
        private let state = Mutex(State())

        /// Sets the ledger recording now (`nil`: none).
        func recording(_ variant: Variant?, _ ledger: (any Ledger)?) {
            state.withLock { state in
                if let variant, let ledger { state.current = (variant, ledger) } else { state.current = nil }
            }
        }

        /// Counts `count` changes folded for `variant`.
        func add(_ count: Int, for variant: Variant) {
            state.withLock { $0.folded[variant, default: 0] += count }
        }

        /// The changes folded per variant, in the background and after the slices.
        var folded: [Variant: Int] { state.withLock { $0.folded } }

        func run(every interval: Duration) async {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard let current = state.withLock({ $0.current }) else { continue }
                // A fold that fails here leaves the changes queued for the slice's own fold.
                if let count = try? await current.ledger.foldAllRollupChanges(batch: 1_000) { add(count, for: current.variant) }
            }
        }
    }
}

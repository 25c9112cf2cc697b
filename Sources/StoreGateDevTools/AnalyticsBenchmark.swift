import Foundation
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport

/// `storegate-dev bench analytics`: the money and subscriber metrics (issue 29) over a
/// two-year ledger of a million transactions of 100,000 subscribers (``AnalyticsWorkload``),
/// on SQLite and on PostgreSQL.
///
/// Per backend: the story is recorded through the ledger's normal path (`record` for signed
/// transactions, `apply` for notifications, the rollups kept in the same transaction),
/// `writers` at a time in the order the facts happened, and its throughput printed; then every
/// metric is asked over the whole two years (`AnalyticsStore.series`, what
/// `GET /v1/analytics/{metric}` awaits) by day, week and month, ungrouped and grouped by
/// product and by storefront: after two warm-up rounds, `rounds` timed rounds give p50, p95
/// and max latency per query. Last, the rollups are rebuilt from the transactions (timed) and
/// compared with the incremental ones.
///
/// With `ledgerFile` (SQLite only) the recorded ledger is kept in that file, and a later run
/// given the same file skips recording and times the queries (and the rebuild) on it: a
/// 10^6 ledger is built once and measured many times, by one build and the next. Likewise a
/// `postgresURL` whose database already holds rollups (a kept ledger, or rollups copied from a
/// SQLite ledger by `Scripts/copy-rollups-sqlite-to-postgres.sh`) is not recorded into: its
/// queries are timed, and the rebuild is skipped (it would replace copied rollups with those of
/// the transactions, none when only rollups were copied).
///
/// With `compareDailyRead` each query is also timed through the daily read
/// (`seriesFromDailySums`: the store sums days, the calculator buckets them), in the same
/// rounds, so the two reads are compared on the same database in the same run.
enum AnalyticsBenchmark {
    /// Groupings measured besides none.
    static let groupings: [AnalyticsGrouping?] = [nil, .product, .storefront]

    static func run(
        transactions: Int, rounds: Int, writers: Int, backends: BenchBackends, postgresURL: String?, postgresConnections: Int,
        proofBytes: Int, ledgerFile: String? = nil, compareDailyRead: Bool = false,
        metrics: [AnalyticsMetric] = AnalyticsMetric.allCases
    ) async throws {
        print("analytics (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), \(ProcessInfo.processInfo.activeProcessorCount) cores, load \(loadAverage()))")
        let built = BenchSupport.now()
        let workload = AnalyticsWorkload(transactions: transactions)
        print(
            "story: \(workload.transactions) transactions (\(workload.facts.count) facts) of \(workload.subscribers) subscribers, "
                + "\(AnalyticsWorkload.firstDay) to \(AnalyticsWorkload.lastDay), built in "
                + String(format: "%.1f s", Double(BenchSupport.now() - built) / 1e9)
        )
        let payload: [UInt8] = (0..<max(0, proofBytes)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let configuration = LedgerConfiguration(catalog: AnalyticsWorkload.catalog, encryption: try LedgerBenchmark.configuration().encryption)

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-bench-analytics-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder

        if backends.includesSQLite {
            let path = ledgerFile ?? directory.appendingPathComponent("analytics.sqlite").path
            let reused = ledgerFile.map { FileManager.default.fileExists(atPath: $0) } ?? false
            let sqlite = try SQLiteLedger(path: path, configuration: configuration)
            if reused {
                print("sqlite: reusing the ledger recorded in \(path) (recording skipped; the story above is not the file's if --transactions differed)")
            }
            try await measure(
                sqlite, label: "sqlite", workload: reused ? nil : workload, writers: writers, rounds: rounds, payload: payload,
                compareDailyRead: compareDailyRead, metrics: metrics
            )
            await sqlite.close()
            if let ledgerFile, !reused { print("sqlite: the ledger is kept in \(ledgerFile) (--ledger-file reuses it)") }
        }
        guard backends.includesPostgres, let (url, server) = try LedgerBenchmark.postgres(postgresURL, database: "storegate_bench_analytics") else { return }
        defer { server?.stop() }
        let postgres = try await PostgresLedger.connect(url: url, configuration: configuration, maximumConnections: max(1, postgresConnections))
        let held = server == nil
            ? try await postgres.rollups(Set(RollupMeasure.allCases), environment: .production, from: nil, through: .max).count : 0
        if held > 0 {
            print("postgres: the database already holds \(held) rollups: recording skipped, queries timed on them, rebuild skipped")
        }
        try await measure(
            postgres, label: "postgres", workload: held > 0 ? nil : workload, writers: writers, rounds: rounds, payload: payload,
            compareDailyRead: compareDailyRead, rebuild: held == 0, metrics: metrics
        )
        await postgres.close()
        print("(postgres: \(server != nil ? "a throwaway local server, fsync on" : "the server given"), \(postgresConnections)-connection pool)")
    }

    /// Records the story into `ledger` (unless `workload` is `nil`: a kept ledger), then
    /// measures every metric and the rebuild.
    static func measure(
        _ ledger: any Ledger, label: String, workload: AnalyticsWorkload?, writers: Int, rounds: Int, payload: [UInt8],
        compareDailyRead: Bool = false, rebuild: Bool = true, metrics: [AnalyticsMetric] = AnalyticsMetric.allCases
    ) async throws {
        if let workload { try await record(workload, into: ledger, label: label, writers: writers, payload: payload) }
        try await measureQueries(ledger, label: label, rounds: rounds, compareDailyRead: compareDailyRead, rebuild: rebuild, metrics: metrics)
    }

    /// Records the story and prints the throughput.
    static func record(_ workload: AnalyticsWorkload, into ledger: any Ledger, label: String, writers: Int, payload: [UInt8]) async throws {
        let (seconds, latencies) = try await workload.record(into: ledger, writers: max(1, writers), payload: payload)
        print(
            "\(label): recorded with rollups, \(writers) writers: "
                + String(
                    format: "%.0f facts/s (%.0f transactions/s), p50 %.2f ms, p99 %.2f ms, %.0f s",
                    Double(workload.facts.count) / seconds, Double(workload.transactions) / seconds,
                    BenchSupport.median(latencies) / 1000, BenchSupport.percentile(latencies, 0.99) / 1000, seconds
                ) + "; load \(loadAverage())"
        )
    }

    /// Times every metric's queries (and, with `compareDailyRead`, the daily read of each,
    /// whose series must equal the bucketed one), then the rebuild (compared with the
    /// incremental rollups) unless `rebuild` is false.
    static func measureQueries(
        _ ledger: any Ledger, label: String, rounds: Int, compareDailyRead: Bool = false, rebuild: Bool = true,
        metrics: [AnalyticsMetric] = AnalyticsMetric.allCases
    ) async throws {
        let today = AnalyticsWorkload.lastDay
        print("\(label): every metric from \(AnalyticsWorkload.firstDay) to \(today), \(rounds) rounds after 2 warm-up rounds")
        print(
            "metric                    interval  group by       points     p50 ms     p95 ms     max ms"
                + (compareDailyRead ? "   daily read: p50 ms     p95 ms" : "")
        )
        var worst: [(metric: AnalyticsMetric, p95: Double, max: Double, query: String, daily: Double)] = []
        for metric in metrics {
            var metricWorst = (p95: 0.0, max: 0.0, query: "")
            var dailyWorst = 0.0
            for interval in AnalyticsInterval.allCases {
                for grouping in groupings {
                    let query = try AnalyticsQuery(metric: metric, from: AnalyticsWorkload.firstDay, to: today, interval: interval, groupBy: grouping)
                    var points = 0
                    for _ in 0..<2 {
                        let series = try await ledger.series(query, today: today)
                        points = series.points.count
                        if compareDailyRead, try await ledger.seriesFromDailySums(query, today: today) != series {
                            throw CLIError("\(label): \(metric.rawValue) by \(interval.rawValue): the bucketed read differs from the daily read")
                        }
                    }
                    var samples: [Double] = [], dailySamples: [Double] = []
                    for _ in 0..<max(1, rounds) {
                        samples += try await BenchSupport.measure(iterations: 1) { _ = try await ledger.series(query, today: today) }
                        if compareDailyRead {
                            dailySamples += try await BenchSupport.measure(iterations: 1) { _ = try await ledger.seriesFromDailySums(query, today: today) }
                        }
                    }
                    samples.sort()
                    dailySamples.sort()
                    let p50 = BenchSupport.median(samples) / 1000, p95 = BenchSupport.percentile(samples, 0.95) / 1000
                    let maximum = (samples.last ?? 0) / 1000
                    let grouped = grouping?.rawValue ?? "-"
                    var line = metric.rawValue.padding(toLength: 26, withPad: " ", startingAt: 0)
                        + interval.rawValue.padding(toLength: 10, withPad: " ", startingAt: 0)
                        + grouped.padding(toLength: 14, withPad: " ", startingAt: 0)
                        + String(format: "%7d %10.1f %10.1f %10.1f", points, p50, p95, maximum)
                    if compareDailyRead {
                        let dailyP95 = BenchSupport.percentile(dailySamples, 0.95) / 1000
                        line += String(format: "            %10.1f %10.1f", BenchSupport.median(dailySamples) / 1000, dailyP95)
                        dailyWorst = max(dailyWorst, dailyP95)
                    }
                    print(line)
                    if p95 > metricWorst.p95 { metricWorst = (p95, maximum, "\(interval.rawValue), \(grouped)") }
                }
            }
            worst.append((metric, metricWorst.p95, metricWorst.max, metricWorst.query, dailyWorst))
        }
        print("\(label): the slowest query of each metric (p95, max; target p95 ≤ 100 ms); load \(loadAverage())")
        for entry in worst {
            print(
                "  " + entry.metric.rawValue.padding(toLength: 26, withPad: " ", startingAt: 0)
                    + String(format: "p95 %7.1f ms  max %7.1f ms", entry.p95, entry.max) + "  (\(entry.query))\(entry.p95 > 100 ? "  OVER" : "")"
                    + (compareDailyRead ? String(format: "  daily read: slowest p95 %7.1f ms", entry.daily) : "")
            )
        }
        guard rebuild else {
            print("\(label): rebuild skipped (a database given with its rollups: `storegate analytics rebuild` checks it)")
            return
        }

        let everything = Set(RollupMeasure.allCases)
        let through = today.number + 800
        let incremental = Rollup.merged(try await ledger.rollups(everything, environment: .production, from: nil, through: through))
        let rebuildStart = BenchSupport.now()
        let rebuild = try await ledger.rebuildRollups()
        let rebuildSeconds = Double(BenchSupport.now() - rebuildStart) / 1e9
        let rebuilt = Rollup.merged(try await ledger.rollups(everything, environment: .production, from: nil, through: through))
        print(
            "\(label): \(incremental.count) rollups; analytics rebuild: \(rebuild.families) families, \(rebuild.transactions) transactions in "
                + String(format: "%.1f s", rebuildSeconds) + "; incremental rollups \(incremental == rebuilt ? "equal" : "DIFFER FROM") the rebuilt ones"
        )
        if incremental != rebuilt {
            throw CLIError("\(label): the incremental rollups differ from a rebuild (\(incremental.count) against \(rebuilt.count))")
        }
    }

    /// The 1, 5 and 15-minute load averages (Linux `/proc/loadavg`).
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "?" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }
}

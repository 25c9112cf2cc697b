import Foundation
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport

/// `storegate-dev bench scale`: what each per-request operation of the ledger costs as the
/// ledger grows (issue 31), on SQLite and on PostgreSQL.
///
/// At each size it builds a fresh ledger of that many transactions, one account per ten
/// (``AnalyticsWorkload``'s two-year story: subscriptions with trials, renewals, upgrades,
/// refunds, renewal changes and billing failures, non-consumables and consumables, told as
/// the service is told them), through the bulk path (``BulkRecording``: the normal path's
/// code in large transactions, so the rows, events, timelines and rollups are the service's).
/// Then, on the built ledgers, through the normal path, it measures `samples` of each
/// operation per size (accounts spread by a multiplicative hash, not a hot one): the
/// one-entitlement check and the whole account's entitlements (1 reader), recording a
/// purchase (1 and 16 writers), consuming a unit, reading a page of 100 events, the console's
/// account page (entitlements, grants and a timeline page), its search for an account and
/// for a transaction id, its overview (eight metrics' series over 90 days and 90 days of
/// activity), and applying a notification as the sync takes it. The samples are taken in
/// rounds after a warm-up, the sizes in turn, and a figure's p50 is the median of its rounds'
/// p50s: a busy stretch of the machine moves one round of every size, not one size's figure,
/// so the ratio to the smallest size (what `--fail-above` checks, for the per-request
/// figures) tells a cost that grows from a noisy machine. Then the bytes on disk per
/// transaction and the process's peak RSS (VmHWM) during each size's warm-up (reset after
/// the builds: the story itself is the benchmark's memory, not the service's).
enum ScaleBenchmark {
    /// What a figure is held to: `--fail-above` holds the requests, `--pages-within` the pages.
    enum Hold {
        /// A request the service answers per call (a read, a write, a page of events), whose
        /// cost issue 31 holds to 1.5× (`--fail-above`) of its cost at the smallest size.
        case ratio
        /// A console page, which issue 31 holds to its p95 at the smallest size: its p50 at any
        /// size must not exceed `--pages-within` times it.
        case page
        /// Nothing: the check and the account read through SQLite's account cache, whose ratio
        /// between a size whose accounts the cache holds and one where it holds few is a
        /// hit-rate comparison (their lines read from the database are held instead).
        case none
    }

    /// One measured operation at one size: every round's samples.
    struct Figure {
        var operation: String
        /// What it is held to (``Hold``).
        var hold: Hold
        var roundMedians: [Double] = []
        var latencies: [Double] = []
        var operations = 0
        var seconds = 0.0

        /// The median of the rounds' p50s: a busy stretch of the machine moves one round, not the figure.
        var p50: Double { BenchSupport.median(roundMedians.sorted()) }
        var p95: Double { BenchSupport.percentile(latencies.sorted(), 0.95) }
        var p99: Double { BenchSupport.percentile(latencies.sorted(), 0.99) }
        var operationsPerSecond: Double { Double(operations) / max(seconds, 1e-9) }
    }

    /// Every figure of one backend, by size, in the order they were measured.
    final class Results {
        var figures: [Int: [Figure]] = [:]
        var peaks: [Int: Int] = [:]
        /// Resident pages of mapped files after a size's warm-up (a memory-mapped database's among them).
        var mapped: [Int: Int] = [:]

        func add(_ size: Int, _ operation: String, hold: Hold, latencies: [Double], seconds: Double) {
            var sized = figures[size, default: []]
            let index = sized.firstIndex { $0.operation == operation } ?? {
                sized.append(Figure(operation: operation, hold: hold))
                return sized.count - 1
            }()
            sized[index].roundMedians.append(BenchSupport.median(latencies))
            sized[index].latencies += latencies
            sized[index].operations += latencies.count
            sized[index].seconds += seconds
            figures[size] = sized
        }
    }

    /// Arguments of a run.
    struct Settings {
        var sizes: [Int]
        var samples: Int
        var backends: BenchBackends
        var postgresURL: String?
        var postgresConnections: Int
        var proofBytes: Int
        var failAbove: Double?
        /// Holds the console's pages: a page's p50 at any size at most this many times its p95
        /// at the smallest size (issue 31: 1).
        var pagesWithin: Double?
        /// Builds through the normal path (16 writers calling `record` and `apply`) instead
        /// of the bulk path: to compare the two.
        var normalPath = false
        /// Timed rounds per size (after one warm-up round), taken in turn across the sizes.
        var rounds: Int
        /// Builds the SQLite ledgers in this folder (`scale-<size>.sqlite`) and keeps them,
        /// instead of a temporary folder deleted at the end: to run `storegate serve` on one.
        var keep: String? = nil
        /// Measures the SQLite ledgers a run with `keep` left there instead of building them:
        /// to measure a 10^7 ledger again (with other settings, or another build of the code)
        /// without its hour of building. The rounds' own writes take ids of this run
        /// (``runTag``), so that they are new to a ledger earlier runs measured.
        var reuse = false
        /// SQLite's page cache per connection and memory-mapped bytes per reader, when given
        /// (else the ledger's defaults): to compare settings.
        var sqlitePageCacheBytes: Int? = nil
        var sqliteMappedBytes: Int? = nil
        /// Concurrent bulk writers per build, when given (else SQLite 2, PostgreSQL 4).
        var bulkWriters: Int? = nil

        /// A prefix of the ids the measuring rounds write, new on every run that reuses ledgers.
        let runTag = "r\(UInt32.random(in: 0...UInt32.max))-"

        /// The SQLite options of the measured ledger.
        var sqliteOptions: SQLiteLedger.Options {
            var options = SQLiteLedger.Options()
            if let sqlitePageCacheBytes { options.pageCacheBytes = max(SQLiteLedger.Options.minimumPageCacheBytes, sqlitePageCacheBytes) }
            if let sqliteMappedBytes { options.mappedBytes = max(0, sqliteMappedBytes) }
            return options
        }
    }

    /// One size's built ledger, open until every round is measured.
    struct Stage {
        var size: Int
        var ledger: any Ledger
        /// The same ledger opened without the account cache (SQLite), read by the lines
        /// "every read from the database".
        var direct: (any Ledger)? = nil
        var built: Built
        /// The bytes on disk, when the backend reads them on the open ledger.
        var bytes: Int?
    }

    static func run(_ settings: Settings) async throws {
        let sizes = settings.sizes.sorted()
        guard let first = sizes.first, first >= 100 else { throw CLIError("--sizes takes transaction counts of at least 100") }
        guard settings.rounds >= 1 else { throw CLIError("--rounds takes at least 1") }
        guard !settings.reuse || (settings.keep != nil && settings.backends == .sqlite && !settings.normalPath) else {
            throw CLIError("--reuse measures the SQLite ledgers of a --keep folder: give --keep DIR and --backend sqlite (and no --normal-path)")
        }
        print(
            "scale (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), \(ProcessInfo.processInfo.activeProcessorCount) cores, "
                + "sizes \(sizes.map(String.init).joined(separator: ", ")), \(settings.samples) samples per operation and size in \(settings.rounds) rounds after a warm-up)"
        )
        var exceeded: [String] = []
        if settings.backends.includesSQLite {
            let options = settings.sqliteOptions
            print("sqlite: page cache \(megabytes(options.pageCacheBytes)) per connection, \(megabytes(options.mappedBytes)) memory-mapped per reader")
            let directory = try sqliteDirectory(keep: settings.keep, sizes: sizes, reuse: settings.reuse)
            defer {
                // Best effort: a temporary folder.
                if settings.keep == nil { try? FileManager.default.removeItem(at: directory) }
            }
            var stages: [Stage] = []
            var ledgers: [SQLiteLedger] = []
            for size in sizes {
                let path = ledgerPath(in: directory, size: size)
                let ledger = try SQLiteLedger(path: path, configuration: try configuration(settings.proofBytes), options: settings.sqliteOptions)
                ledgers.append(ledger)
                let bulk: (any BulkRecording)? = settings.normalPath ? nil : ledger
                let built: Built
                if settings.reuse {
                    built = Built(transactions: size, accounts: size / 10)
                    print("sqlite \(size) transactions: reusing \(path) (\(megabytes(ledger.databaseBytes())))")
                } else {
                    built = try await build(ledger, bulk: bulk, label: "sqlite", size: size, streams: settings.bulkWriters ?? 2, proofBytes: settings.proofBytes)
                }
                // The same file without the account cache: its reads all go to the database.
                var uncached = settings.sqliteOptions
                uncached.cachedAccounts = 0
                let direct = try SQLiteLedger(path: path, configuration: try configuration(settings.proofBytes), options: uncached)
                stages.append(Stage(size: size, ledger: ledger, direct: direct, built: built))
            }
            exceeded += try await measure(stages, label: "sqlite", settings: settings)
            for (stage, ledger) in zip(stages, ledgers) {
                await stage.direct?.close()
                await ledger.close()
                footprint(label: "sqlite", size: stage.size, bytes: ledger.databaseBytes(), transactions: stage.built.transactions)
            }
            if settings.keep != nil, !settings.reuse {
                try productsFile().write(to: directory.appendingPathComponent("products.json"))
                print(
                    "          (sqlite ledgers kept in \(directory.path): \(sizes.map { "scale-\($0).sqlite" }.joined(separator: ", ")); "
                        + "their catalog, for STOREGATE_PRODUCTS_FILE: products.json)"
                )
            }
        }
        if settings.backends.includesPostgres, let (_, server) = try LedgerBenchmark.postgres(settings.postgresURL, database: "storegate_scale_probe") {
            defer { server?.stop() }
            var stages: [Stage] = []
            var ledgers: [PostgresLedger] = []
            // A fresh database per size (on the given server, the given database serves the
            // smallest size only: it must start empty).
            for size in server == nil ? [first] : sizes {
                let url = try server.map { try $0.createDatabase("storegate_scale_\(size)") } ?? settings.postgresURL ?? ""
                let ledger = try await PostgresLedger.connect(
                    url: url, configuration: try configuration(settings.proofBytes), maximumConnections: max(4, settings.postgresConnections)
                )
                ledgers.append(ledger)
                let bulk: (any BulkRecording)? = settings.normalPath ? nil : ledger
                // Four bulk writers, each on its own subscribers: since schema 17 they share no
                // rollup rows (writes queue their changes), and the overview's per-day counts
                // are taken in time order (a writer behind waits, never in a cycle). Before,
                // one writer: 1,174 facts/s at 10^5 against 2,151 with four.
                let built = try await build(
                    ledger, bulk: bulk, label: "postgres", size: size, streams: settings.bulkWriters ?? 4, proofBytes: settings.proofBytes
                )
                // The stream is numbered when it is read: number the build's events first, so
                // the measurements do not pay for it (the time it took is a figure of its own).
                let settling = BenchSupport.now()
                try await ledger.settleEvents(within: .seconds(3600))
                print("postgres \(size): the build's events numbered in " + String(format: "%.1f s", Double(BenchSupport.now() - settling) / 1e9))
                // What a team does after an import: the planner's statistics and the visibility
                // map brought up to date, instead of measuring whatever autovacuum has reached.
                let vacuuming = BenchSupport.now()
                try await ledger.vacuumAndAnalyze()
                print("postgres \(size): VACUUM (ANALYZE) after the build in " + String(format: "%.1f s", Double(BenchSupport.now() - vacuuming) / 1e9))
                stages.append(Stage(size: size, ledger: ledger, built: built, bytes: try await ledger.databaseBytes()))
            }
            exceeded += try await measure(stages, label: "postgres", settings: settings)
            for (stage, ledger) in zip(stages, ledgers) {
                await ledger.close()
                footprint(label: "postgres", size: stage.size, bytes: stage.bytes ?? 0, transactions: stage.built.transactions)
            }
            print("          (postgres: \(server != nil ? "a throwaway local server, fsync on" : "the server given"), \(max(4, settings.postgresConnections))-connection pool)")
        }
        print(
            "          (p50 is the median of the rounds' p50s, × is it over the smallest size's; p99 over every round; "
                + "RSS is VmHWM over a size's warm-up, reset after the builds)"
        )
        if settings.failAbove != nil || settings.pagesWithin != nil {
            guard exceeded.isEmpty else {
                throw CLIError("\(exceeded.count) figure(s) above their bound: \(exceeded.joined(separator: "; "))")
            }
            print(
                (settings.failAbove.map { "every per-request figure is within \($0)× of the smallest size" } ?? "")
                    + (settings.failAbove != nil && settings.pagesWithin != nil ? "; " : "")
                    + (settings.pagesWithin.map { "every console page's p50 is within \($0) × its p95 at the smallest size" } ?? "")
                    + " (the account cache's lines are not held)"
            )
        }
    }

    /// The folder the SQLite ledgers are built in: `keep` (created if needed; refused when it
    /// already holds a ledger of one of the sizes, which the build would add to, unless
    /// `reuse`, which needs every one), else a new temporary folder.
    static func sqliteDirectory(keep: String?, sizes: [Int], reuse: Bool = false) throws -> URL {
        guard let keep else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-bench-scale-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return directory
        }
        let directory = URL(fileURLWithPath: keep, isDirectory: true)
        if !reuse { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        for size in sizes {
            let path = ledgerPath(in: directory, size: size)
            let exists = FileManager.default.fileExists(atPath: path)
            if reuse, !exists { throw CLIError("--reuse: \(path) does not exist (build it with --keep first)") }
            if !reuse, exists {
                throw CLIError("--keep: \(path) exists already (the build would add to it); remove it or choose another folder")
            }
        }
        return directory
    }

    /// The SQLite ledger of `size` transactions in `directory` (`scale-<size>.sqlite`).
    static func ledgerPath(in directory: URL, size: Int) -> String {
        directory.appendingPathComponent("scale-\(size).sqlite").path
    }

    /// The story's catalog as a products file (`STOREGATE_PRODUCTS_FILE`), written beside
    /// kept ledgers so that `storegate serve` answers their entitlements as the benchmark does.
    static func productsFile() throws -> Data {
        var products: [String: [String: String]] = [:]
        for product in AnalyticsWorkload.products {
            products[product.id] = ["type": product.type.rawValue].merging(product.group.map { ["subscriptionGroup": $0] } ?? [:]) { first, _ in first }
        }
        let entitlements = AnalyticsWorkload.catalog.entitlements.mapValues { ["products": $0.products.sorted()] }
        return try JSONSerialization.data(
            withJSONObject: ["products": products, "entitlements": entitlements] as [String: Any], options: [.prettyPrinted, .sortedKeys]
        )
    }

    /// The ledger configuration: the story's catalog, its proofs sealed with AES-GCM when
    /// `proofBytes` is above zero (else only their digests are kept, as with no key configured).
    static func configuration(_ proofBytes: Int) throws -> LedgerConfiguration {
        LedgerConfiguration(
            catalog: AnalyticsWorkload.catalog, encryption: proofBytes > 0 ? try LedgerBenchmark.configuration().encryption : nil,
            now: { ScaleBenchmark.now }
        )
    }

    /// The clock of the measuring phase: the day after the story's last day.
    static let now = AnalyticsWorkload.date((AnalyticsWorkload.lastDay.number + 1) * AnalyticsWorkload.millisecondsPerDay)

    /// What a build produced.
    struct Built {
        var transactions: Int
        var accounts: Int
    }

    /// Builds the story of `size` transactions into `bulk`, `streams` bulk writers at a time,
    /// each taking the subscribers of its residue (a subscriber's facts stay in order); without
    /// `bulk`, into `ledger` through the normal path, 16 writers at a time.
    static func build(
        _ ledger: any Ledger, bulk: (any BulkRecording)?, label: String, size: Int, streams: Int, proofBytes: Int
    ) async throws -> Built {
        let built = try await record(ledger, bulk: bulk, label: label, size: size, streams: streams, proofBytes: proofBytes)
        // The rollup changes the build queued, folded before anything is measured, as the
        // service's folder would (SQLite's bulk path folds its own as it goes).
        let folding = BenchSupport.now()
        let folded = try await ledger.foldAllRollupChanges()
        if folded > 0 {
            print("\(label) \(size): the build's \(folded) queued rollup changes folded in " + String(format: "%.1f s", Double(BenchSupport.now() - folding) / 1e9))
        }
        return built
    }

    private static func record(
        _ ledger: any Ledger, bulk: (any BulkRecording)?, label: String, size: Int, streams: Int, proofBytes: Int
    ) async throws -> Built {
        let started = BenchSupport.now()
        let workload = AnalyticsWorkload(transactions: size)
        let generated = BenchSupport.now()
        let payload: [UInt8] = (0..<max(0, proofBytes)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        guard let bulk else {
            let (seconds, _) = try await workload.record(into: ledger, writers: 16, payload: payload)
            print(
                "\(label) \(workload.transactions) transactions (\(workload.subscribers) accounts, \(workload.facts.count) facts): story generated in "
                    + String(format: "%.1f s", Double(generated - started) / 1e9) + ", built by the NORMAL path in "
                    + String(format: "%.1f s (%.0f facts/s, 16 writers), peak RSS ", seconds, Double(workload.facts.count) / seconds)
                    + megabytes(BenchSupport.memory()?.peak ?? 0)
            )
            return Built(transactions: workload.transactions, accounts: workload.subscribers)
        }
        let batch = bulk.recommendedBatch
        let failures = try await withThrowingTaskGroup(of: [String].self) { group in
            for stream in 0..<streams {
                group.addTask {
                    var failures: [String] = []
                    var facts: [LedgerFact] = []
                    facts.reserveCapacity(batch)
                    func flush() async throws {
                        for outcome in try await bulk.recordInBulk(facts) {
                            if let error = outcome.error { failures.append("\(error.code)") }
                        }
                        facts.removeAll(keepingCapacity: true)
                    }
                    for fact in workload.facts where Int(fact.subscriber) % streams == stream {
                        let at = AnalyticsWorkload.date(fact.time)
                        switch try workload.message(fact, payload: payload) {
                        case .record(let proof, let account): facts.append(.record(proof, for: account, receivedAt: at))
                        case .notify(let notification): facts.append(.notification(notification, receivedAt: at))
                        }
                        if facts.count == batch { try await flush() }
                    }
                    if !facts.isEmpty { try await flush() }
                    return failures
                }
            }
            var all: [String] = []
            for try await failures in group { all += failures }
            return all
        }
        let seconds = Double(BenchSupport.now() - generated) / 1e9
        let peak = BenchSupport.memory()?.peak ?? 0
        print(
            "\(label) \(workload.transactions) transactions (\(workload.subscribers) accounts, \(workload.facts.count) facts): story generated in "
                + String(format: "%.1f s", Double(generated - started) / 1e9) + ", built by the bulk path in "
                + String(format: "%.1f s (%.0f facts/s, %d writers), peak RSS ", seconds, Double(workload.facts.count) / seconds, streams) + megabytes(peak)
        )
        if !failures.isEmpty {
            // The story has no refusal: a failed fact is a bug of the story or of the ledger.
            throw CLIError("\(failures.count) facts of the story failed (first: \(failures[0]))")
        }
        return Built(transactions: workload.transactions, accounts: workload.subscribers)
    }

    static func footprint(label: String, size: Int, bytes: Int, transactions: Int) {
        print(
            label.padding(toLength: 10, withPad: " ", startingAt: 0) + "\(size)".padding(toLength: 11, withPad: " ", startingAt: 0)
                + "disk: \(megabytes(bytes)), \(bytes / max(1, transactions)) bytes per transaction"
        )
    }

    static func megabytes(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }

    /// Measures every operation on every stage: one warm-up round per size (not counted;
    /// the size's RSS is its peak), then `settings.rounds` rounds, each taking the sizes in
    /// turn (ascending, then descending), so a busy stretch of the machine falls on every
    /// size alike. Prints each size's figures; returns the per-request ones beyond
    /// `settings.failAbove` times their cost at the smallest size.
    static func measure(_ stages: [Stage], label: String, settings: Settings) async throws -> [String] {
        let results = Results()
        let perRound = max(1, settings.samples / settings.rounds)
        for round in 0...settings.rounds {
            for stage in round % 2 == 0 ? stages : stages.reversed() {
                if round == 0 { _ = BenchSupport.resetPeakMemory() }
                try await measureRound(
                    stage.ledger, direct: stage.direct, size: stage.size, first: round * 2 * perRound, count: perRound, tag: settings.reuse ? settings.runTag : "",
                    into: round == 0 ? nil : results
                )
                if round == 0 {
                    results.peaks[stage.size] = BenchSupport.memory()?.peak ?? 0
                    results.mapped[stage.size] = BenchSupport.fileBackedMemory() ?? 0
                }
            }
        }
        guard let smallest = stages.first?.size else { return [] }
        var exceeded: [String] = []
        print("backend   size       operation                                      ops/s      p50 µs      p99 µs    × p50")
        for stage in stages {
            let column = label.padding(toLength: 10, withPad: " ", startingAt: 0) + "\(stage.size)".padding(toLength: 11, withPad: " ", startingAt: 0)
            for figure in results.figures[stage.size] ?? [] {
                let base = results.figures[smallest]?.first { $0.operation == figure.operation }
                let ratio = base.map { figure.p50 / max($0.p50, 0.001) } ?? 1
                var note = ""
                switch figure.hold {
                case .ratio:
                    if let limit = settings.failAbove, ratio > limit {
                        exceeded.append("\(label) \(figure.operation) at \(stage.size): \(String(format: "%.2f", ratio))×")
                    }
                case .page:
                    guard let within = settings.pagesWithin else { if settings.failAbove != nil { note = "  (not held)" }; break }
                    // The p95 at the smallest size, over every round's samples there.
                    let bound = within * (base?.p95 ?? .infinity)
                    note = String(format: "  (p50 held to %.1f µs)", bound)
                    if figure.p50 > bound {
                        exceeded.append(
                            "\(label) \(figure.operation) at \(stage.size): p50 "
                                + String(format: "%.1f µs, above %g × the smallest size's p95 (%.1f µs)", figure.p50, within, bound)
                        )
                    }
                case .none:
                    if settings.failAbove != nil || settings.pagesWithin != nil { note = "  (not held)" }
                }
                print(
                    column + figure.operation.padding(toLength: 44, withPad: " ", startingAt: 0)
                        + String(format: "%10.0f  %10.1f  %10.1f  %6.2f", figure.operationsPerSecond, figure.p50, figure.p99, ratio) + "×" + note
                )
            }
            print(
                column + "RSS while measuring: \(megabytes(results.peaks[stage.size] ?? 0)) "
                    + "(mapped files resident after the warm-up: \(megabytes(results.mapped[stage.size] ?? 0)))"
            )
        }
        return exceeded
    }

    /// The newest event's sequence (a doubling search, then a bisection, of one-event pages).
    static func newestSequence(_ ledger: any Ledger) async throws -> Int64 {
        var low: Int64 = 0
        var high: Int64 = 1024
        while true {
            let page = try await ledger.events(after: high, limit: 1)
            if page.isEmpty { break }
            low = high
            high *= 2
        }
        while high - low > 1 {
            let middle = low + (high - low) / 2
            let page = try await ledger.events(after: middle, limit: 1)
            if page.isEmpty { high = middle } else { low = middle }
        }
        return high
    }
}

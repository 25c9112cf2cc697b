import Foundation
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateEvents
import StoreGateHTTP
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport

/// `storegate-dev bench events`: what the outbox costs and how fast it drains.
///
/// - record: the ledger benchmark's workload (``LedgerBenchmark``), whose every write now
///   appends its events; compare with `bench ledger` of a build before the outbox.
/// - read: paging the whole stream with `events(after:limit:)`, 1,000 at a time, and the peak
///   memory above the start (constant: one page at a time).
/// - deliver: every event to a local receiver through the webhook service (signatures,
///   leases, per-account order), on SQLite and on PostgreSQL.
/// - clock: the subscription clock appending the transitions of many periods ending at once.
/// - retention: deleting the events recorded, 10,000 per transaction.
enum EventsBenchmark {
    static func run(iterations: Int, backends: BenchBackends, postgresURL: String?, postgresConnections: Int) async throws {
        let count = max(20_000, iterations * 10)
        let accounts = max(1, count / 4)
        print("events (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(count) operations per line)")
        print("backend   operation                                      ops/s      p50 µs      p99 µs")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-bench-events-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder

        if backends.includesSQLite {
            let sqlite = try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path, configuration: LedgerBenchmark.configuration())
            try await LedgerBenchmark.record(sqlite, label: "sqlite", writers: 1, range: 0..<count, accounts: accounts)
            try await LedgerBenchmark.record(sqlite, label: "sqlite", writers: 16, range: count..<(2 * count), accounts: accounts)
            try await read(sqlite, label: "sqlite")
            try await deliver(sqlite, label: "sqlite", count: count / 4, accounts: accounts, offset: 2 * count)
            try await clock(sqlite, label: "sqlite", families: count / 4)
            try await prune(sqlite, label: "sqlite")
            await sqlite.close()
        }

        guard backends.includesPostgres, let (url, server) = try LedgerBenchmark.postgres(postgresURL, database: "storegate_bench_events") else { return }
        defer { server?.stop() }
        let postgres = try await PostgresLedger.connect(url: url, configuration: LedgerBenchmark.configuration(), maximumConnections: max(1, postgresConnections))
        try await LedgerBenchmark.record(postgres, label: "postgres", writers: 16, range: 0..<count, accounts: accounts)
        try await read(postgres, label: "postgres")
        try await deliver(postgres, label: "postgres", count: count / 4, accounts: accounts, offset: count)
        try await clock(postgres, label: "postgres", families: count / 4)
        try await prune(postgres, label: "postgres")
        await postgres.close()
    }

    /// Retention deleting every event it may (all delivered, up to the endpoint's cursor), in
    /// the service's batches of 10,000.
    static func prune(_ ledger: any Ledger, label: String) async throws {
        let cutoff = Date().addingTimeInterval(3600)
        let start = BenchSupport.now()
        var total = 0
        var batches: [Double] = []
        while true {
            let begin = BenchSupport.now()
            let pruning = try await ledger.pruneEvents(recordedBefore: cutoff, limit: 10_000)
            guard pruning.deleted > 0 else { break }
            batches.append(Double(BenchSupport.now() - begin) / 1000)
            total += pruning.deleted
        }
        let seconds = Double(BenchSupport.now() - start) / 1e9
        batches.sort()
        LedgerBenchmark.report(label, "retention: oldest events deleted", total, seconds, batches)
        print("          (retention: batches of 10,000 with their deliveries; p50/p99 are per batch)")
    }

    /// Pages through every event, 1,000 at a time.
    static func read(_ ledger: any Ledger, label: String) async throws {
        let before = BenchSupport.anonymousMemory() ?? 0
        var peak = before
        let start = BenchSupport.now()
        var cursor: Int64 = 0
        var total = 0
        var pages: [Double] = []
        while true {
            let begin = BenchSupport.now()
            let page = try await ledger.events(after: cursor, limit: 1000)
            pages.append(Double(BenchSupport.now() - begin) / 1000)
            guard let last = page.last else { break }
            total += page.count
            cursor = last.sequence
            peak = max(peak, BenchSupport.anonymousMemory() ?? 0)
        }
        let seconds = Double(BenchSupport.now() - start) / 1e9
        pages.sort()
        LedgerBenchmark.report(label, "read \(total) events, pages of 1,000", total, seconds, pages)
        print("          (read: heap at most \(String(format: "%.1f", Double(max(0, peak - before)) / 1_048_576)) MB above the start, sampled after each page (SQLite's mapped file pages are not heap); p50/p99 are per page)")
    }

    /// Records `families` subscriptions whose periods all end at one moment, then measures how
    /// fast the subscription clock appends their `active → expired` transitions (batches of
    /// 500 families, as the service takes them).
    static func clock(_ ledger: any Ledger, label: String, families: Int) async throws {
        let end = Date().addingTimeInterval(86_400)
        for index in 0..<families {
            try await ledger.record(
                .subscriptionPeriod("clock-\(index)", bundleId: LedgerStressCommand.bundleId, endingAt: end),
                for: try LedgerStressCommand.account("clock-\(index)")
            )
        }
        var batches: [Double] = []
        var total = 0
        let start = BenchSupport.now()
        while true {
            let begin = BenchSupport.now()
            let due = try await ledger.emitElapsedTransitions(until: end.addingTimeInterval(1), limit: 500)
            guard due > 0 else { break }
            batches.append(Double(BenchSupport.now() - begin) / 1000)
            total += due
        }
        let seconds = Double(BenchSupport.now() - start) / 1e9
        batches.sort()
        LedgerBenchmark.report(label, "clock: periods ended, transitions appended", total, seconds, batches)
        print("          (clock: \(total) of \(families) families, batches of 500; p50/p99 are per batch)")
    }

    /// Records `count` more operations, then measures how fast the webhook service delivers
    /// their events to a local receiver.
    static func deliver(_ ledger: any Ledger, label: String, count: Int, accounts: Int, offset: Int) async throws {
        let store = ledger
        let secret = "whsec_bench-secret-0123456789"
        let logger = Logger(label: "storegate.bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let transport = AsyncHTTPClientTransport(logger: logger)
        try await WebhookReceiver.run(secret: secret) { receiver in
            let endpoint = try WebhookEndpoint(name: "bench-\(UUID().uuidString.prefix(8))", url: receiver.url, secret: secret)
            var policy = WebhookDeliveryPolicy()
            policy.pollInterval = .milliseconds(5)
            policy.batchSize = 128
            // The receiver listens on 127.0.0.1, which the default address policy refuses.
            let service = WebhookDeliveryService(
                store: store, endpoints: [endpoint], transport: transport, policy: policy, addressPolicy: .allowingEveryAddress, logger: logger
            )
            try await service.deliverOnce(endpoint)  // the endpoint starts here
            for index in offset..<(offset + count) {
                let (proof, account) = try LedgerBenchmark.proof(index, accounts: accounts)
                try await ledger.record(proof, for: account)
            }
            let start = BenchSupport.now()
            var delivered = 0
            // Rounds until every event recorded above is delivered.
            while true {
                let done = try await service.deliverOnce(endpoint)
                delivered = receiver.received.count
                if done == 0, try await store.deliveryCounts()[endpoint.name]?[.pending] ?? 0 == 0 { break }
            }
            let seconds = Double(BenchSupport.now() - start) / 1e9
            let valid = receiver.received.allSatisfy { $0.signatureValid }
            LedgerBenchmark.report(label, "deliver events to a local receiver", delivered, seconds, [])
            print("          (deliver: \(delivered) events, signatures \(valid ? "all valid" : "NOT all valid"), batches of \(policy.batchSize))")
        }
        try await transport.shutdown()
    }
}

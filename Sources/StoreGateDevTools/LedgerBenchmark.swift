import Foundation
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Crypto

/// `storegate-dev bench ledger`: recorded transactions per second and entitlement queries per
/// second, with p50/p99 latency, on SQLite and on PostgreSQL.
///
/// The workload: one verified proof per transaction (a 2 KiB raw proof, sealed with AES-GCM),
/// 80 % consumables, 10 % non-consumables, 10 % renewals of one subscription per account,
/// spread over `count / 4` accounts. Queries read a random account's full entitlements
/// (every transaction, renewal, notification and balance) or one consumable balance.
/// PostgreSQL runs on a throwaway server with fsync on (``TemporaryPostgres``) unless
/// `--postgres-url` names one.
enum LedgerBenchmark {
    static func run(iterations: Int, backends: BenchBackends = .all, postgresURL: String? = nil, postgresConnections: Int = 16) async throws {
        let count = max(20_000, iterations * 10)
        let accounts = max(1, count / 4)
        print("ledger (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(count) operations per line)")
        print("backend   operation                                      ops/s      p50 µs      p99 µs")
        let configuration = try Self.configuration()

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-bench-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder

        for synchronous in backends.includesSQLite ? [SQLiteLedger.Options.Synchronous.normal, .full] : [] {
            let path = directory.appendingPathComponent("ledger-\(synchronous.rawValue).sqlite").path
            let sqlite = try SQLiteLedger(path: path, configuration: configuration, options: .init(synchronous: synchronous))
            let label = "sqlite" + (synchronous == .full ? "*" : "")
            try await record(sqlite, label: label, writers: 1, range: 0..<count, accounts: accounts)
            try await record(sqlite, label: label, writers: 16, range: count..<(2 * count), accounts: accounts)
            if synchronous == .normal {
                for readers in [1, 2] {
                    try await query(sqlite, label: label, readers: readers, count: count, accounts: accounts, full: true)
                }
                for readers in [1, 2] {
                    try await query(sqlite, label: label, readers: readers, count: count, accounts: accounts, full: false)
                }
                for readers in [1, 2] {
                    try await check(sqlite, label: label, readers: readers, count: count, accounts: accounts, catalog: Self.smallCatalog)
                }
                try await check(sqlite, label: label, readers: 1, count: count, accounts: accounts, catalog: Self.largeCatalog)
            }
            await sqlite.close()
        }
        if backends.includesSQLite {
            print("          (* synchronous=FULL: an fsync per commit, durable across power loss; default NORMAL survives a killed process)")
        }

        guard backends.includesPostgres, let (url, server) = try postgres(postgresURL, database: "storegate_bench") else { return }
        defer { server?.stop() }
        let postgres = try await PostgresLedger.connect(url: url, configuration: configuration, maximumConnections: max(1, postgresConnections))
        try await record(postgres, label: "postgres", writers: 16, range: 0..<count, accounts: accounts)
        try await query(postgres, label: "postgres", readers: 16, count: count, accounts: accounts, full: true)
        try await query(postgres, label: "postgres", readers: 16, count: count, accounts: accounts, full: false)
        try await check(postgres, label: "postgres", readers: 16, count: count, accounts: accounts, catalog: Self.smallCatalog)
        try await check(postgres, label: "postgres", readers: 16, count: count, accounts: accounts, catalog: Self.largeCatalog)
        await postgres.close()
        print("          (postgres: \(server != nil ? "a throwaway local server, fsync on" : "the server given"), \(postgresConnections)-connection pool)")
    }

    /// The PostgreSQL database to benchmark: `given`, or a database on a throwaway local server
    /// with fsync on (stop it when done); `nil`, said on standard output, when there is neither.
    static func postgres(_ given: String?, database: String) throws -> (url: String, server: TemporaryPostgres?)? {
        if let given { return (given, nil) }
        guard TemporaryPostgres.isAvailable else {
            print("postgres  skipped: no PostgreSQL binaries (install postgresql or pass --postgres-url)")
            return nil
        }
        let server = try TemporaryPostgres.start(TemporaryPostgres.Options(fsync: true))
        do {
            return (try server.createDatabase(database), server)
        } catch {
            server.stop()
            throw error
        }
    }

    /// The ledger configuration of every benchmark: raw proofs sealed with AES-GCM.
    static func configuration() throws -> LedgerConfiguration {
        LedgerConfiguration(encryption: try ProofEncryption(currentKeyID: "bench", keys: ["bench": .init(size: .bits256)]))
    }

    // MARK: Workload

    private static let payload: [UInt8] = (0..<2048).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    private static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

    /// The proof of operation `index`.
    static func proof(_ index: Int, accounts: Int) throws -> (VerifiedProof, AccountID) {
        let accountNumber = index % accounts
        let id = "bench-\(index)"
        let date = t0.addingTimeInterval(Double(index))
        let transaction: VerifiedTransaction
        switch index % 10 {
        case 0:
            transaction = LedgerStressCommand.transaction(id, original: id, product: "pro.feature.\(index % 7)", type: .nonConsumable, date: date)
        case 1:
            transaction = LedgerStressCommand.transaction(
                id, original: "sub-\(accountNumber)", product: "pro.monthly", type: .autoRenewable, date: date,
                expires: date.addingTimeInterval(30 * 86_400), group: "pro"
            )
        default:
            transaction = LedgerStressCommand.transaction(id, original: id, product: "coins.\(index % 3)", type: .consumable, date: date)
        }
        var raw = Array("\(id):".utf8)
        raw += payload
        let proof = VerifiedProof(
            kind: .signedTransaction, environment: .production, bundleId: LedgerStressCommand.bundleId,
            signedDate: date, transactions: [transaction], rawProof: raw
        )
        return (proof, try LedgerStressCommand.account("acct-\(accountNumber)"))
    }

    static func record(_ ledger: any Ledger, label: String, writers: Int, range: Range<Int>, accounts: Int) async throws {
        let (seconds, latencies) = try await measure(tasks: writers, indices: range) { index in
            let (proof, account) = try proof(index, accounts: accounts)
            try await ledger.record(proof, for: account)
        }
        report(label, "record a transaction, \(writers) writer\(writers == 1 ? "" : "s")", range.count, seconds, latencies)
    }

    private static func query(_ ledger: any Ledger, label: String, readers: Int, count: Int, accounts: Int, full: Bool) async throws {
        let now = t0.addingTimeInterval(Double(count))
        let (seconds, latencies) = try await measure(tasks: readers, indices: 0..<count) { index in
            // A spread of accounts, not a hot one: a multiplicative hash of the index.
            let account = try LedgerStressCommand.account("acct-\((index &* 2_654_435_761) % accounts)")
            if full {
                _ = try await ledger.entitlements(for: account, at: now)
            } else {
                _ = try await ledger.balance(of: "coins.\(index % 3)", for: account)
            }
        }
        let what = full ? "entitlements of an account" : "one consumable balance"
        report(label, "\(what), \(readers) reader\(readers == 1 ? "" : "s")", count, seconds, latencies)
    }

    /// The app's entitlements as the workload's products suggest: pro (the features and the
    /// subscription) and a coins currency.
    static let smallCatalog = ProductCatalog(entitlements: [
        "pro": EntitlementDefinition(products: (0..<7).map { "pro.feature.\($0)" } + ["pro.monthly"]),
        "coins": EntitlementDefinition(currency: ["coins.0": 1, "coins.1": 10, "coins.2": 100]),
    ])

    /// A catalog of 1,000 products and 100 entitlements (the workload's among them).
    static let largeCatalog: ProductCatalog = {
        var catalog = smallCatalog
        for index in 0..<1000 {
            catalog.products["product.\(index)"] = ProductCatalog.Product(type: index % 3 == 0 ? .autoRenewable : .nonConsumable, subscriptionGroup: index % 3 == 0 ? "group.\(index % 10)" : nil)
        }
        for index in 0..<98 {
            catalog.entitlements["entitlement.\(index)"] = EntitlementDefinition(products: (0..<10).map { "product.\((index * 10 + $0) % 1000)" })
        }
        return catalog
    }()

    /// The one-entitlement check an app makes per request: the account's holdings and grants
    /// (``Ledger/entitlementFacts(for:at:)``, one round trip on PostgreSQL), derived through the catalog for one entitlement (as `GET …/entitlements/{entitlement}`).
    private static func check(_ ledger: any Ledger, label: String, readers: Int, count: Int, accounts: Int, catalog: ProductCatalog) async throws {
        let now = t0.addingTimeInterval(Double(count))
        let (seconds, latencies) = try await measure(tasks: readers, indices: 0..<count) { index in
            let account = try LedgerStressCommand.account("acct-\((index &* 2_654_435_761) % accounts)")
            let facts = try await ledger.entitlementFacts(for: account, at: now)
            guard EntitlementResolver.resolve("pro", holdings: facts.holdings, catalog: catalog, grants: facts.grants, at: now) != nil else {
                throw CLIError("the catalog lost its pro entitlement")
            }
        }
        let what = "one entitlement (\(catalog.entitlements.count) in catalog)"
        report(label, "\(what), \(readers) reader\(readers == 1 ? "" : "s")", count, seconds, latencies)
    }

    /// Runs `operation` for every index, spread over `tasks` concurrent tasks (also `bench scale`'s).
    static func measure(
        tasks: Int, indices: Range<Int>, _ operation: @escaping @Sendable (Int) async throws -> Void
    ) async throws -> (seconds: Double, latencies: [Double]) {
        let start = BenchSupport.now()
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for task in 0..<tasks {
                group.addTask {
                    var samples: [Double] = []
                    samples.reserveCapacity(indices.count / tasks + 1)
                    var index = indices.lowerBound + task
                    while index < indices.upperBound {
                        let begin = BenchSupport.now()
                        try await operation(index)
                        samples.append(Double(BenchSupport.now() - begin) / 1000)
                        index += tasks
                    }
                    return samples
                }
            }
            var all: [Double] = []
            for try await samples in group { all += samples }
            return all.sorted()
        }
        return (Double(BenchSupport.now() - start) / 1e9, latencies)
    }

    static func report(_ backend: String, _ operation: String, _ count: Int, _ seconds: Double, _ latencies: [Double]) {
        print(
            backend.padding(toLength: 10, withPad: " ", startingAt: 0)
                + operation.padding(toLength: 44, withPad: " ", startingAt: 0)
                + String(format: "%10.0f  %10.1f  %10.1f", Double(count) / seconds, BenchSupport.median(latencies), BenchSupport.percentile(latencies, 0.99))
        )
    }
}

import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerPostgres
@testable import StoreGateLedgerSQLite

/// Migration 18 (the rollups' day sums): a ledger at 17 gets `ledger_rollup_days` filled from
/// its stored rollups, and a change it had queued but not folded reaches both tables.
@Suite("Migration 18: the rollups summed per day and currency")
struct Migration18Tests {
    static func rollup(_ measure: RollupMeasure, day: Int64, product: String, currency: String, offer: String = "none", count: Int64, amount: Int64) -> Rollup {
        Rollup(
            key: RollupKey(
                day: day, measure: measure, environment: .production, productId: product, subscriptionGroup: "pro", storefront: "USA",
                currency: currency, offer: offer
            ),
            value: RollupValue(count: count, amount: amount)
        )
    }

    @Test("a file at 17 opens with day sums equal to its rollups summed, queued changes folded into both")
    func fromSeventeen() async throws {
        let path = try SQLiteWriterTests.temporaryPath()
        do {
            let connection = try SQLiteConnection(path: path, create: true, busyTimeoutMilliseconds: 5000)
            defer { connection.close() }
            try SQLiteSchema.migrate(connection, now: 0, through: 17)
            // As schema 17 stored them: no day sums.
            try SQLiteLedger.applyRollups(Self.stored, connection, daySums: false)
            try connection.run("INSERT INTO ledger_rollup_changes (deltas) VALUES (?)", [.blob(RollupChanges.encode(Self.queued))])
        }
        #expect(try SQLiteMigration12Tests.versions(path) == (1...17).filter { $0 != 10 }.map(Int64.init))
        let ledger = try SQLiteLedger(path: path)
        try await Self.checkDaySums(ledger)
        await ledger.close()
        #expect(try SQLiteMigration12Tests.versions(path) == (1...18).filter { $0 != 10 }.map(Int64.init))
        var rows: Int64 = -1
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        try connection.query("SELECT COUNT(*) FROM ledger_rollup_days") { row throws(LedgerError) in rows = row.integer(0) }
        #expect(rows == 4, "one row per measure, day and currency")
    }

    static let stored = [
        rollup(.revenue, day: 20_000, product: "pro.monthly", currency: "USD", count: 2, amount: 19_980),
        rollup(.revenue, day: 20_000, product: "pro.yearly", currency: "USD", count: 1, amount: 99_990),
        rollup(.revenue, day: 20_000, product: "pro.monthly", currency: "EUR", offer: "introductory", count: 1, amount: 4_990),
        rollup(.paidStarts, day: 20_000, product: "pro.monthly", currency: "USD", count: 2, amount: 19_980),
        rollup(.paidEnds, day: 20_030, product: "pro.monthly", currency: "USD", count: 2, amount: 19_980),
    ]
    static let queued = [
        rollup(.revenue, day: 20_000, product: "pro.monthly", currency: "USD", offer: "promotional", count: 1, amount: 5_000),
        rollup(.paidEnds, day: 20_030, product: "pro.monthly", currency: "USD", count: -1, amount: -9_990),
    ]

    /// What a ledger migrated from 17 holding ``stored`` and ``queued`` reads.
    static func checkDaySums(_ ledger: any Ledger) async throws {
        let measures: Set<RollupMeasure> = [.revenue, .paidStarts, .paidEnds]
        let raw = try await ledger.rollups(measures, environment: .production, from: nil, through: 100_000)
        #expect(raw.count == 6, "the queued change was folded: \(raw)")
        let byDay = try await ledger.rollups(measures, environment: .production, from: nil, through: 100_000, keeping: .currency)
        #expect(Set(byDay.map { "\($0.key.measure.rawValue) \($0.key.day) \($0.key.currency) \($0.value.count) \($0.value.amount)" }) == [
            "revenue 20000 USD 4 124970", "revenue 20000 EUR 1 4990", "paid_starts 20000 USD 2 19980", "paid_ends 20030 USD 1 9990",
        ])
        let summed = try await ledger.rollups([.revenue], environment: .production, from: 20_000, through: 20_000, keeping: [])
        #expect(summed.map(\.value) == [RollupValue(count: 5, amount: 129_960)], "over currencies too")
        // A metric's bucketed read (PostgreSQL sums it in SQL from the day sums).
        let read = try RollupBucketRead(
            measures: [.paidStarts, .paidEnds], environment: .production, bucketStarts: [20_010, 20_020, 20_030], through: 20_040,
            readsFromStart: true, keeping: .currency
        )
        let buckets = Rollup.merged(try await ledger.rollups(read).map { rollup in
            var key = rollup.key
            key.day = read.bucketStarts.last { $0 <= key.day } ?? read.from - 1
            return Rollup(key: key, value: rollup.value)
        })
        #expect(buckets.map { "\($0.key.measure.rawValue) \($0.key.day) \($0.value.count)" } == [
            "paid_starts 20009 2", "paid_ends 20030 1",
        ])
    }

    @Test(
        "a PostgreSQL ledger at 17 opens with day sums equal to its rollups summed, queued changes folded into both",
        .enabled(if: TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired, "PostgreSQL server binaries are not installed"))
    func postgresFromSeventeen() async throws {
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        defer { server.stop() }
        let url = try await server.makeDatabase()
        let old = try await PostgresLedger.connect(
            url: url, configuration: LedgerConfiguration(), maximumConnections: 2, operationTimeout: nil, migratingThrough: 17)
        let logger = old.logger
        try await old.withConnection { connection in
            for rollup in Self.stored {
                let key = rollup.key
                try await PostgresLedger.run(connection, """
                    INSERT INTO ledger_rollups (measure, environment, day, product_id, subscription_group, storefront, currency, offer, count, amount)
                    VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                    """, [
                        .text(key.measure.rawValue), .text(key.environment.rawValue), .integer(key.day), .text(key.productId),
                        .text(key.subscriptionGroup), .text(key.storefront), .text(key.currency), .text(key.offer),
                        .integer(rollup.value.count), .integer(rollup.value.amount),
                    ], logger: logger)
            }
            try await PostgresLedger.run(
                connection, "INSERT INTO ledger_rollup_changes (deltas) VALUES ($1)", [.bytes(RollupChanges.encode(Self.queued))], logger: logger)
        }
        await old.close()
        let ledger = try await PostgresLedger.connect(url: url, configuration: LedgerConfiguration(), maximumConnections: 2)
        try await Self.checkDaySums(ledger)
        await ledger.close()
    }
}

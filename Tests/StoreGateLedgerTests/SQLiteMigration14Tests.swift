import Foundation
import StoreGateCore
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// Migration 14 (money facts): transactions stored before it keep every fact, their money
/// facts read as unknown, and the first open computes the rollups they contribute.
@Suite("SQLite migration 14: money facts and rollups")
struct SQLiteMigration14Tests {
    @Test("a version 11 ledger opens with unknown money facts and rollups computed from its transactions")
    func migrates() async throws {
        let path = try SQLiteWriterTests.temporaryPath()
        do {
            let connection = try SQLiteConnection(path: path, create: true, busyTimeoutMilliseconds: 5000)
            defer { connection.close() }
            try SQLiteSchema.migrate(connection, now: 0, through: 11)
            let start = Purchases.date(0).ledgerMilliseconds, end = Purchases.date(30).ledgerMilliseconds
            try connection.execute("INSERT INTO ledger_families (environment, original_transaction_id, account_id) VALUES ('Production', 's-1', 'alice')")
            try connection.run("""
                INSERT INTO ledger_transactions (\(SQLiteSchema.transactionCopyColumns))
                VALUES ('Production', 's-1', 's-1', 'alice', 'com.example.app', 'pro.monthly', 'Auto-Renewable Subscription', 1, 'pro', 1,
                        ?, ?, ?, NULL, NULL, 0, NULL, NULL, ?, 'signed_transaction', NULL, ?, ?)
                """, [.integer(start), .integer(start), .integer(end), .integer(start), .integer(start), .integer(start)])
        }
        let ledger = try SQLiteLedger(path: path)
        let stored = try #require(try await ledger.transaction("s-1", in: .production))
        #expect(stored.money == nil)
        #expect(stored.expiresDate == Purchases.date(30))
        let rollups = try await ledger.rollups(Set(RollupMeasure.allCases), environment: .production, from: nil, through: 100_000)
        #expect(Set(rollups.map(\.key.measure)) == [.unpriced, .paidStarts, .paidEnds, .newPaid, .churnOther])
        var needsRebuild: Int64 = -1
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        try connection.query("SELECT needs_rebuild FROM ledger_analytics_state") { row throws(LedgerError) in needsRebuild = row.integer(0) }
        #expect(needsRebuild == 0)
        #expect(try await ledger.fillMoneyFacts(MoneyFacts(price: 9990, currency: "USD", storefront: "USA"), of: "s-1", in: .production))
        let revenue = try await ledger.rollups([.revenue, .unpriced], environment: .production, from: nil, through: 100_000)
        #expect(revenue.map(\.key.measure) == [.revenue] && revenue.first?.value == RollupValue(count: 1, amount: 9990))
        await ledger.close()
    }

    @Test("a file at 14 gets a lower version merged after it from a StoreGate that knows it; one that knows only up to 12 refuses it")
    func lowerVersionMergedLater() throws {
        let path = try SQLiteWriterTests.temporaryPath()
        let connection = try SQLiteConnection(path: path, create: true, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        try SQLiteSchema.migrate(connection, now: 0)
        #expect(try SQLiteMigration12Tests.versions(path) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18])

        // 10 is unused so far: a feature merged after 14 could take it.
        let probe = SQLiteSchema.Migration(version: 10, description: "merged after 14", statements: ["CREATE TABLE ledger_probe_10 (x INTEGER)"])
        let known = (SQLiteSchema.migrations + [probe]).sorted { $0.version < $1.version }
        try SQLiteSchema.migrate(connection, now: 0, known: known)
        #expect(try SQLiteMigration12Tests.versions(path) == Array(1...18))
        try connection.execute("INSERT INTO ledger_probe_10 (x) VALUES (1)")
        try SQLiteSchema.migrate(connection, now: 0, known: known)
        #expect(try SQLiteMigration12Tests.versions(path) == Array(1...18), "nothing applied twice")

        let older = SQLiteSchema.migrations.filter { $0.version <= 12 }
        let refused = #expect(throws: LedgerError.self) { try SQLiteSchema.migrate(connection, now: 0, known: older) }
        #expect(refused?.code == .schemaTooNew)
    }
}

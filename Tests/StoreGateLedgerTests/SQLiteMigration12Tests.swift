import Foundation
import StoreGateCore
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// Migration 12 (transfers) on a file main's StoreGate left at schema 11: version 10 is never
/// used, so such a file takes migration 12 and those after it (13 live administration, 14 money facts), and its purchases can move.
@Suite("SQLite migration 12: transfers on a file at schema 11")
struct SQLiteMigration12Tests {
    static func versions(_ path: String) throws -> [Int64] {
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        var versions: [Int64] = []
        try connection.query("SELECT version FROM ledger_migrations ORDER BY version") { row throws(LedgerError) in versions.append(row.integer(0)) }
        return versions
    }

    @Test("a file at schema 11 holding a purchase migrates from 12 on (never 10), and the purchase then moves under the transfer policy")
    func fromEleven() async throws {
        let path = try SQLiteWriterTests.temporaryPath()
        let alice = Purchases.account("alice"), bob = Purchases.account("bob")
        do {
            let connection = try SQLiteConnection(path: path, create: true, busyTimeoutMilliseconds: 5000)
            defer { connection.close() }
            try SQLiteSchema.migrate(connection, now: 0, through: 11)
            // Recorded as schema 11 recorded it: the planner's write without a move. Today's
            // statements read and write schema 14's money columns: they are added for the write
            // and dropped again, leaving the table as schema 11 left it; no rollups (no table).
            let money = ["money_known INTEGER NOT NULL DEFAULT 0", "price", "currency", "storefront", "offer_type", "offer_identifier",
                         "offer_period", "offer_discount_type", "transaction_reason"]
            for column in money { try connection.execute("ALTER TABLE ledger_transactions ADD COLUMN \(column)") }
            let planner = LedgerPlanner(configuration: LedgerConfiguration())
            let prepared = try planner.prepare(Purchases.proof(Purchases.nonConsumable("n1")), for: alice, receivedAt: Purchases.t0)
            try connection.transaction(immediate: true) { () throws(LedgerError) in
                let state = try SQLiteLedger.loadState(connection, families: prepared.familyKeys, transactions: prepared.transactionKeys)
                var plan = try planner.plan(prepared, state: state).0
                plan.rollupDeltas = []
                try SQLiteLedger.apply(plan, at: Purchases.t0, connection)
            }
            for column in money {
                try connection.execute("ALTER TABLE ledger_transactions DROP COLUMN \(column.prefix { $0 != " " })")
            }
        }
        #expect(try Self.versions(path) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 11])

        let ledger = try SQLiteLedger(path: path, configuration: LedgerConfiguration(transferPolicy: .transfer, now: { Purchases.t0 }))
        // 12 (transfers), then every later one (13: live administration, 14: money facts); 10 is never used.
        let later = SQLiteSchema.migrations.map { Int64($0.version) }.filter { $0 >= 12 }
        #expect(later.first == 12)
        #expect(try Self.versions(path) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 11] + later, "the transfers migration and those after it, 10 never used")
        #expect(try await ledger.entitlements(for: alice, at: Purchases.t0).ownedNonConsumables == ["pro.lifetime"])
        let outcome = try await ledger.record(Purchases.proof([Purchases.nonConsumable("n1")], kind: .appReceipt), for: bob)
        #expect(outcome.transferredOriginalTransactionIds == ["n1"])
        #expect(try await ledger.entitlements(for: alice, at: Purchases.t0).ownedNonConsumables.isEmpty)
        #expect(try await ledger.entitlements(for: bob, at: Purchases.t0).ownedNonConsumables == ["pro.lifetime"])
        #expect(try await ledger.checkIntegrity().isHealthy)
        await ledger.close()
    }
}

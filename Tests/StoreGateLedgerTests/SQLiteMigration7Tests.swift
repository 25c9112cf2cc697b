import Foundation
import StoreGateCore
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// Migration 7 writes fewer pages per commit: transactions kept in a table ordered by family
/// with one index, events numbered with the plain rowid instead of `AUTOINCREMENT`. Every row
/// stored before must read back the same, lookups must still use an index, and sequences must
/// never go back or be reused.
@Suite("SQLite migration 7: transactions by family, events numbered without AUTOINCREMENT")
struct SQLiteMigration7Tests {
    static let alice = Purchases.account("alice")

    /// A file at schema version 6 holding `count` events appended as version 6 did.
    static func fileAtVersion6(events count: Int) throws -> String {
        let path = try SQLiteWriterTests.temporaryPath()
        let connection = try SQLiteConnection(path: path, create: true, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        try SQLiteSchema.migrate(connection, now: 0, through: 6)
        let events = (1...count).map { index in
            LedgerEvent(
                id: "old-\(index)", sequence: 0, type: .purchaseRecorded, account: alice, productId: "feature.\(index)",
                environment: .production, transactionId: "old-\(index)", originalTransactionId: "old-\(index)",
                occurredAt: Purchases.t0, recordedAt: Purchases.t0, source: ProofKind.signedTransaction.rawValue,
                entitlement: LedgerEvent.Entitlement(productType: .nonConsumable, isEntitled: true)
            )
        }
        try connection.transaction(immediate: true) { () throws(LedgerError) in try SQLiteLedger.appendEvents(events, connection) }
        var sql = ""
        try connection.query("SELECT sql FROM sqlite_master WHERE name = 'ledger_events'") { row throws(LedgerError) in sql = row.text(0) }
        #expect(sql.contains("AUTOINCREMENT"), "the file is built as version 6 built it")
        return path
    }

    /// Records `proof` into a version 6 file as version 6 did: the same planner and the same
    /// statements, on the tables version 6 created.
    static func recordAtVersion6(_ path: String, _ proof: VerifiedProof, for account: AccountID) throws {
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        // Today's statements write schema 14's money columns: the version 6 table gets them
        // (migration 7's copy leaves them behind, migration 14 adds them again), and the plan
        // leaves out the rollups, which version 6 had no table for.
        var columns: Set<String> = []
        try connection.query("SELECT name FROM pragma_table_info('ledger_transactions')") { row throws(LedgerError) in columns.insert(row.text(0)) }
        if !columns.contains("money_known") {
            try connection.execute("ALTER TABLE ledger_transactions ADD COLUMN money_known INTEGER NOT NULL DEFAULT 0")
            for column in ["price", "currency", "storefront", "offer_type", "offer_identifier", "offer_period", "offer_discount_type", "transaction_reason"] {
                try connection.execute("ALTER TABLE ledger_transactions ADD COLUMN \(column)")
            }
        }
        let planner = LedgerPlanner(configuration: LedgerConfiguration())
        let prepared = try planner.prepare(proof, for: account, receivedAt: Purchases.t0)
        try connection.transaction(immediate: true) { () throws(LedgerError) in
            let state = try SQLiteLedger.loadState(connection, families: prepared.familyKeys, transactions: prepared.transactionKeys)
            var plan = try planner.plan(prepared, state: state).0
            plan.rollupDeltas = []
            try SQLiteLedger.apply(plan, at: Purchases.t0, connection)
        }
    }

    /// The plan SQLite chooses for `sql`, one line per step.
    static func queryPlan(_ path: String, _ sql: String) throws -> String {
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        var lines: [String] = []
        try connection.query("EXPLAIN QUERY PLAN " + sql) { row throws(LedgerError) in lines.append(row.text(3)) }
        return lines.joined(separator: "\n")
    }

    static func execute(_ path: String, _ sql: String) throws {
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        try connection.execute(sql)
    }

    static func schemaVersion(_ path: String) throws -> Int64 {
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        var version: Int64 = 0
        try connection.query("SELECT MAX(version) FROM ledger_migrations") { row throws(LedgerError) in version = row.integer(0) }
        return version
    }

    @Test("the migration keeps every event and its sequence, the next event follows the newest, and the newest can never be deleted")
    func keepsSequences() async throws {
        let path = try Self.fileAtVersion6(events: 3)
        // An old event deleted before the migration leaves a gap, not a renumbering.
        try Self.execute(path, "DELETE FROM ledger_events WHERE sequence = 1")

        let ledger = try SQLiteLedger(path: path)
        #expect(try Self.schemaVersion(path) == Int64(SQLiteSchema.migrations.last?.version ?? 0), "through 7, and on to the latest")
        let migrated = try await ledger.events(after: 0, limit: 10)
        #expect(migrated.map(\.sequence) == [2, 3])
        #expect(migrated.map(\.id) == ["old-2", "old-3"])
        #expect(migrated.map(\.productId) == ["feature.2", "feature.3"])
        #expect(try SQLiteTimelineIndexTests.mark(path) == (3, 2), "the stored events are in the timeline index, up to the newest")
        #expect(try await ledger.timeline(for: Self.alice, before: nil, limit: 10).map(\.sequence) == [3, 2])

        try await ledger.record(Purchases.proof(Purchases.nonConsumable("new-1")), for: Self.alice)
        let appended = try await ledger.events(after: 3, limit: 10)
        #expect(appended.map(\.sequence) == [4])
        #expect(appended.first?.transactionId == "new-1")

        // The newest event is kept whatever asks; an older one may go (retention), and the
        // next sequence still follows the newest.
        #expect(throws: LedgerError.self) { try Self.execute(path, "DELETE FROM ledger_events WHERE sequence = 4") }
        try Self.execute(path, "DELETE FROM ledger_events WHERE sequence = 2")
        try await ledger.record(Purchases.proof(Purchases.nonConsumable("new-2")), for: Self.alice)
        #expect(try await ledger.events(after: 0, limit: 10).map(\.sequence) == [3, 4, 5])
        await ledger.close()
    }

    @Test("a version 6 file whose newest events were deleted by hand is refused, not renumbered over sequences cursors passed")
    func refusesReuse() throws {
        let path = try Self.fileAtVersion6(events: 3)
        try Self.execute(path, "DELETE FROM ledger_events WHERE sequence = 3")
        do {
            _ = try SQLiteLedger(path: path)
            Issue.record("the ledger opened a file whose next sequence would reuse 3")
        } catch {
            #expect(error.code == .migration)
            #expect(error.reason.contains("would be reused"), "\(error.reason)")
        }
        #expect(try Self.schemaVersion(path) == 6, "nothing of the migration was kept")
    }

    @Test("transactions stored before the migration read back the same, by key, by family and by account, and stay unique")
    func keepsTransactions() async throws {
        let path = try Self.fileAtVersion6(events: 1)
        let bob = Purchases.account("bob")
        try Self.recordAtVersion6(path, Purchases.proof([Purchases.consumable("c-1", quantity: 3), Purchases.nonConsumable("n-1")]), for: Self.alice)
        try Self.recordAtVersion6(path, Purchases.proof(Purchases.period("s-1", original: "s-1", start: 0)), for: Self.alice)
        try Self.recordAtVersion6(path, Purchases.proof(Purchases.period("s-2", original: "s-1", start: 30)), for: Self.alice)
        try Self.recordAtVersion6(path, Purchases.proof(Purchases.consumable("c-2", product: "gems")), for: bob)

        let ledger = try SQLiteLedger(path: path)
        #expect(try Self.schemaVersion(path) == Int64(SQLiteSchema.migrations.last?.version ?? 0), "through 7, and on to the latest")
        let renewal = try #require(try await ledger.transaction("s-2", in: .production))
        #expect(renewal.originalTransactionId == "s-1")
        #expect(renewal.account == Self.alice)
        #expect(renewal.expiresDate == Purchases.date(60))
        let entitlements = try await ledger.entitlements(for: Self.alice, at: Purchases.date(45))
        #expect(entitlements.subscriptions.map(\.expiresDate) == [Purchases.date(60)])
        #expect(entitlements.nonConsumables.map(\.productId) == ["pro.lifetime"])
        #expect(try await ledger.balance(of: "coins", for: Self.alice).available == 3)
        #expect(try await ledger.entitlements(for: bob, at: Purchases.t0).consumables.map(\.productId) == ["gems"])

        // The unique key holds across the copy: a replay by another account is refused, a
        // renewal of the migrated family joins it.
        await #expect(throws: LedgerError.self) {
            try await ledger.record(Purchases.proof(Purchases.consumable("c-1", quantity: 3)), for: bob)
        }
        try await ledger.record(Purchases.proof(Purchases.period("s-3", original: "s-1", start: 60)), for: Self.alice)
        #expect(try await ledger.entitlements(for: Self.alice, at: Purchases.date(75)).subscriptions.map(\.expiresDate) == [Purchases.date(90)])
        #expect(try await ledger.checkIntegrity().problems == [])

        // Every lookup the writer and the reads make still goes through an index.
        let columns = SQLiteLedger.transactionColumns
        #expect(try Self.queryPlan(path, "SELECT \(columns) FROM ledger_transactions WHERE environment = 'Production' AND transaction_id = 'x'").contains("ledger_transactions_key"))
        #expect(try Self.queryPlan(path, "SELECT \(columns) FROM ledger_transactions WHERE environment = 'Production' AND original_transaction_id = 'x'").contains("PRIMARY KEY"))
        // An account's rows: its families by their account index first, then each family's
        // rows by key; no scan, and no temporary index built at every read.
        for (statement, byKey) in [
            (SQLiteLedger.selectByAccount, "SEARCH x USING PRIMARY KEY"),
            (SQLiteLedger.selectRenewalsOfAccount, "SEARCH x USING PRIMARY KEY"),
            (SQLiteLedger.selectNotificationsOfAccount, "SEARCH x USING INDEX ledger_notifications_family"),
        ] {
            let steps = try Self.queryPlan(path, statement.replacingOccurrences(of: "?1", with: "'alice'")).split(separator: "\n")
            #expect(steps.count == 2, "\(steps)")
            #expect(steps.first?.hasPrefix("SEARCH f USING COVERING INDEX ledger_families_account") == true, "\(steps)")
            #expect(steps.last?.hasPrefix(byKey) == true, "\(steps)")
        }
        await ledger.close()
    }

    @Test("a new file numbers events from 1 with no sqlite_sequence row")
    func newFile() async throws {
        let path = try SQLiteWriterTests.temporaryPath()
        let ledger = try SQLiteLedger(path: path)
        try await ledger.record(Purchases.proof([Purchases.nonConsumable("a"), Purchases.nonConsumable("b")]), for: Self.alice)
        #expect(try await ledger.events(after: 0, limit: 10).map(\.sequence) == [1, 2])
        await ledger.close()
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        var rows = 0
        try connection.query("SELECT COUNT(*) FROM sqlite_sequence WHERE name = 'ledger_events'") { row throws(LedgerError) in rows = Int(row.integer(0)) }
        #expect(rows == 0)
    }
}

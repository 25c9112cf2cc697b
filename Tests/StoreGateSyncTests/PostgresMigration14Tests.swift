import Foundation
import Logging
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerPostgres
@testable import StoreGateSync

/// Migration 14 (money facts) on a PostgreSQL ledger main's StoreGate left at schema 12
/// (transfers): the purchases it holds keep every fact, their money reads as unknown until the
/// stored proofs are re-read (``MoneyFactsBackfill``), the rollups computed at the first open
/// equal a rebuild, and the migrated ledger records and moves purchases with `ledger_apply_v6`
/// while schema 12's `ledger_apply_v5` stays as it was.
@Suite("PostgreSQL migration 14: money facts on a ledger at schema 12")
struct PostgresMigration14Tests {
    static var bob: AccountID {
        get throws { try AccountID("bob") }
    }

    /// Records `proof` as a schema 12 StoreGate did: the planner's plan for a new purchase,
    /// written by `ledger_apply_v5` (which reads neither the money members nor the rollups).
    static func recordAtSchema12(_ proof: VerifiedProof, for account: AccountID, in ledger: PostgresLedger, at date: Date) async throws {
        let planner = LedgerPlanner(configuration: ledger.configuration)
        let prepared = try planner.prepare(proof, for: account, receivedAt: date)
        let (plan, _) = try planner.plan(prepared, state: PlanningState())
        let document = PostgresPlanJSON.encode(plan, revisions: [:], familyRevisions: [:], unownedFamilies: [], now: date.ledgerMilliseconds)
        let values: [PostgresValue] = [.text(document), plan.proof?.sealed.map { PostgresValue.bytes($0.combined) } ?? .null]
            + PostgresPlanJSON.eventParameters(plan.events)
        let logger = ledger.logger
        try await ledger.withConnection { connection in
            try await PostgresLedger.run(
                connection, "SELECT ledger_apply_v5($1::jsonb, $2::bytea, $3::text[], $4::text[], $5::text[], $6::boolean[])", values,
                logger: logger)
        }
    }

    /// The first column of `sql`'s rows, as text.
    static func texts(_ sql: String, in ledger: PostgresLedger) async throws -> [String] {
        let logger = ledger.logger
        return try await ledger.withConnection { connection in
            try await PostgresLedger.rows(connection, sql, logger: logger).map { try $0.text(0) }
        }
    }

    static func allRollups(_ ledger: PostgresLedger) async throws -> [Rollup] {
        try await ledger.rollups(Set(RollupMeasure.allCases), environment: .sandbox, from: nil, through: 100_000)
    }

    @Test(
        "a ledger at schema 12 with purchases migrates through 13 and 14, stored proofs fill the money facts, rollups equal a rebuild",
        .enabled(if: TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired, "PostgreSQL server binaries are not installed"))
    func fromTwelve() async throws {
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        defer { server.stop() }
        let url = try await server.makeDatabase()
        let configuration = try MoneyFactsBackfillTests.configuration()
        let signedAt = Date(timeIntervalSince1970: 1_700_000_000)

        let old = try await PostgresLedger.connect(
            url: url, configuration: configuration, maximumConnections: 2, operationTimeout: nil, migratingThrough: 12)
        let versionsSQL = "SELECT m.version::text FROM ledger_migrations m ORDER BY m.version"
        #expect(try await Self.texts(versionsSQL, in: old) == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "11", "12"])
        #expect(try await Self.texts("SELECT proname::text FROM pg_proc WHERE proname = 'ledger_apply_v6'", in: old).isEmpty)
        var payload = JWSPayloads.transaction(transactionId: "t1", originalTransactionId: "t1", productId: "com.example.storegate.monthly")
        payload["currency"] = "EUR"
        payload["price"] = 10_990
        payload["storefront"] = "DEU"
        let signed = try JWSMinter.shared().mint(json: payload)
        try await Self.recordAtSchema12(
            MoneyFactsBackfillTests.proof(MoneyFactsBackfillTests.transaction("t1"), raw: Array(signed.utf8)),
            for: MoneyFactsBackfillTests.alice, in: old, at: signedAt)
        try await Self.recordAtSchema12(
            MoneyFactsBackfillTests.proof(
                MoneyFactsBackfillTests.transaction("r1", source: .appReceipt), raw: Array("a receipt".utf8), kind: .appReceipt),
            for: MoneyFactsBackfillTests.alice, in: old, at: signedAt)
        await old.close()

        let ledger = try await PostgresLedger.connect(url: url, configuration: configuration, maximumConnections: 2)
        #expect(
            try await Self.texts(versionsSQL, in: ledger) == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "11", "12", "13", "14", "15", "16", "17", "18"],
            "13 (live administration), 14 to 18 on top of 12")
        #expect(
            try await Self.texts("SELECT proname::text FROM pg_proc WHERE proname IN ('ledger_apply_v5', 'ledger_apply_v6') ORDER BY 1", in: ledger)
                == ["ledger_apply_v5", "ledger_apply_v6"])
        let before = try #require(try await ledger.transaction("t1", in: .sandbox))
        #expect(before.money == nil, "schema 12 kept no money facts")
        #expect(before.expiresDate == MoneyFactsBackfillTests.transaction("t1").expiresDate)
        let opened = try await Self.allRollups(ledger)
        #expect(
            opened.filter { $0.key.measure == .unpriced }.map(\.value.count).reduce(0, +) == 2,
            "the first open computed the rollups of both purchases, priced as unknown")

        let report = try await MoneyFactsBackfill(ledger: ledger, logger: Logger(label: "test")).run()
        #expect(report.scanned == 2)
        #expect(report.filled == 1)
        #expect(report.receiptOnly == 1)
        #expect(report.proofNotStored == 0 && report.notInProof == 0)
        let filled = try #require(try await ledger.transaction("t1", in: .sandbox))
        #expect(filled.money?.price == 10_990)
        #expect(filled.money?.currency == "EUR")
        #expect(filled.money?.storefront == "DEU")
        #expect(try await ledger.transaction("r1", in: .sandbox)?.money == nil)

        let incremental = try await Self.allRollups(ledger)
        #expect(incremental.filter { $0.key.measure == .revenue }.map(\.value.amount) == [10_990])
        #expect(incremental.filter { $0.key.measure == .unpriced }.map(\.value.count).reduce(0, +) == 1)
        _ = try await ledger.rebuildRollups()
        #expect(try await Self.allRollups(ledger) == incremental, "the backfill's rollups equal a recomputation")

        // The migrated ledger moves a purchase with ledger_apply_v6: its money facts stay, the rollups do not move.
        let moved = try await ledger.transfer(TransferRequest(
            environment: .sandbox, originalTransactionId: "t1", account: Self.bob, reason: "support ticket", transferredBy: "test",
            date: signedAt))
        #expect(moved.isMoved)
        #expect(try await ledger.transaction("t1", in: .sandbox)?.money == filled.money)
        #expect(try await Self.allRollups(ledger) == incremental)
        #expect(try await ledger.checkIntegrity().isHealthy)

        // A StoreGate that also knows a version below the highest (10, unused so far: a feature
        // merged after 14) applies it.
        let probe = PostgresSchema.Migration(
            version: 10, description: "merged after 14", statements: ["CREATE TABLE ledger_probe_10 (x BIGINT)"])
        let known = (PostgresSchema.migrations + [probe]).sorted { $0.version < $1.version }
        let logger = ledger.logger
        try await ledger.transaction(bounded: false) { connection in
            try await PostgresSchema.migrate(connection, logger: logger, now: 0, known: known)
        }
        #expect(
            try await Self.texts(versionsSQL, in: ledger) == ["1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16", "17", "18"])
        #expect(try await Self.texts("SELECT 'probe' FROM ledger_probe_10 LIMIT 0", in: ledger).isEmpty)
        await ledger.close()
    }
}

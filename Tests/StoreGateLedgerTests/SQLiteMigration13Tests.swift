import Foundation
import StoreGateCore
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerPostgres
@testable import StoreGateLedgerSQLite

/// Migration 13 (webhook endpoints and API keys managed live) comes after main's 12
/// (transfers) on both backends, and a file main's StoreGate left at schema 12 takes 13 alone.
@Suite("Migration 13: live administration after transfers")
struct SQLiteMigration13Tests {
    @Test("both backends know the same versions, in increasing order: 12 (transfers), 13 (live administration), 14 (money facts), 15 (activity per day), 16 (its shards on PostgreSQL), 17 (queued rollup changes), 18 (rollup day sums)")
    func ordered() {
        let sqlite = SQLiteSchema.migrations.map(\.version)
        let postgres = PostgresSchema.migrations.map(\.version)
        #expect(sqlite == sqlite.sorted() && Set(sqlite).count == sqlite.count, "\(sqlite)")
        #expect(postgres == postgres.sorted() && Set(postgres).count == postgres.count, "\(postgres)")
        #expect(sqlite == postgres)
        #expect(Array(sqlite.suffix(7)) == [12, 13, 14, 15, 16, 17, 18])
        #expect(SQLiteSchema.migrations.first { $0.version == 12 }?.description.contains("transfers") == true)
        #expect(SQLiteSchema.migrations.first { $0.version == 13 }?.description.contains("API keys") == true)
        #expect(PostgresSchema.migrations.first { $0.version == 12 }?.description.contains("transfers") == true)
        #expect(PostgresSchema.migrations.first { $0.version == 13 }?.description.contains("API keys") == true)
        #expect(SQLiteSchema.migrations.first { $0.version == 15 }?.description.contains("activity") == true)
        #expect(PostgresSchema.migrations.first { $0.version == 16 }?.description.contains("spread") == true)
        #expect(PostgresSchema.migrations.first { $0.version == 15 }?.description.contains("activity") == true)
    }

    @Test("a file at schema 12 holding a purchase migrates to 13 and 14, keeps the purchase and stores endpoints and keys")
    func fromTwelve() async throws {
        let path = try SQLiteWriterTests.temporaryPath()
        let alice = Purchases.account("alice")
        do {
            let connection = try SQLiteConnection(path: path, create: true, busyTimeoutMilliseconds: 5000)
            defer { connection.close() }
            try SQLiteSchema.migrate(connection, now: 0, through: 12)
        }
        #expect(try SQLiteMigration12Tests.versions(path) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12])
        do {
            let ledger = try SQLiteLedger(path: path, configuration: LedgerConfiguration(now: { Purchases.t0 }))
            try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1")), for: alice)
            await ledger.close()
        }
        #expect(try SQLiteMigration12Tests.versions(path) == [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18], "13 to 18")

        let ledger = try SQLiteLedger(path: path, configuration: LedgerConfiguration(now: { Purchases.t0 }))
        #expect(try await ledger.entitlements(for: alice, at: Purchases.t0).ownedNonConsumables == ["pro.lifetime"])
        #expect(try await ledger.createWebhookEndpoint(LedgerTests.Admin.endpoint("after-12")))
        #expect(try await ledger.webhookEndpoints().map(\.name) == ["after-12"])
        let key = StoredAPIKey(
            name: "after-12", digest: LedgerTests.Admin.digest("sg_after-12"), permissions: ["events.read"], createdAt: LedgerTests.Admin.t, createdBy: "ops"
        )
        #expect(try await ledger.createAPIKey(key))
        #expect(try await ledger.apiKey(digest: LedgerTests.Admin.digest("sg_after-12"))?.name == "after-12")
        #expect(try await ledger.checkIntegrity().isHealthy)
        await ledger.close()
    }
}

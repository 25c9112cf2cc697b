import Foundation
import StoreGateCore
@testable import StoreGateDevTools
import StoreGateLedger
import StoreGateLedgerMigration
import PostgresNIO
import StoreGateLedgerPostgres
@testable import StoreGateLedgerSQLite
import StoreGateTestSupport
import Testing

extension LedgerTests {
    /// `storegate migrate`'s engine: a SQLite ledger built as the scale benchmark builds it
    /// (the bulk path), plus grants, a transfer, webhook deliveries and sealed proofs, moved into
    /// PostgreSQL and compared through the ledger's own reads; the refusals, by code.
    @Suite("Ledger migration")
    struct Migration {
        static let alice = Purchases.account("alice")
        static let bob = Purchases.account("bob")

        /// The clock of both sides: after the story's last day.
        static var now: Date { ScaleBenchmark.now }

        /// A SQLite ledger of ~`size` transactions from the scale story (sealed 64-byte proofs),
        /// with a grant, a revoked grant, a transfer and webhook deliveries; closed when returned.
        static func buildSource(in directory: URL, size: Int = 1200, configuration: LedgerConfiguration) async throws -> String {
            let path = directory.appendingPathComponent("source.sqlite").path
            let ledger = try SQLiteLedger(path: path, configuration: configuration)
            do {
                _ = try await ScaleBenchmark.build(ledger, bulk: ledger, label: "sqlite", size: size, streams: 1, proofBytes: 64)
                let start = Purchases.date(1)
                _ = try await ledger.grant(GrantRequest(
                    account: alice, entitlement: "pro", term: .until(now.addingTimeInterval(86_400 * 30)), reason: "goodwill",
                    grantedBy: "support", idempotencyKey: "g1", startsAt: start
                ))
                let revoked = try await ledger.grant(GrantRequest(
                    account: bob, entitlement: "plus", term: .until(now.addingTimeInterval(86_400)), reason: "trial", grantedBy: "support",
                    idempotencyKey: "g2", startsAt: start
                )).grant
                _ = try await ledger.revokeGrant(revoked.id, of: bob, by: "support", reason: "mistake", at: now)
                // A webhook endpoint starts at the end of the stream: what follows is delivered.
                #expect(try await ledger.fanOut(endpoint: "app", types: nil, limit: 100, now: now) == 0)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("migrate-1")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.consumable("migrate-2", quantity: 3)), for: alice)
                _ = try await ledger.consume("coins", quantity: 1, idempotencyKey: "k1", for: alice, at: now)
                _ = try await ledger.transfer(TransferRequest(
                    environment: .production, originalTransactionId: "migrate-1", account: bob, reason: "ticket 1", transferredBy: "support",
                    date: now
                ))
                #expect(try await ledger.fanOut(endpoint: "app", types: nil, limit: 100, now: now) > 0)
            } catch {
                await ledger.close()
                throw error
            }
            await ledger.close()
            return path
        }

        /// Every event of `ledger`, in sequence order.
        static func events(_ ledger: any Ledger) async throws -> [LedgerEvent] {
            if let postgres = ledger as? PostgresLedger { try await postgres.settleEvents(within: .seconds(60)) }
            var events: [LedgerEvent] = []
            while true {
                let page = try await ledger.events(after: events.last?.sequence ?? 0, limit: 1000)
                guard !page.isEmpty else { return events }
                events += page
            }
        }

        @Test("a scale-story ledger moves to PostgreSQL: every event and every account's entitlements equal, counts and digests agree, numbering continues")
        func roundTrip() async throws {
            guard PostgresForTests.shouldRun else { return }
            let directory = try TemporaryFiles.directory("migrate")
            defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
            let configuration = try ScaleBenchmark.configuration(64)
            let path = try await Self.buildSource(in: directory, configuration: configuration)
            let url = try await PostgresForTests.freshDatabase()

            let copied = Copied()
            let report = try await LedgerMigration(from: "sqlite:" + path, to: url, batchRows: 500).migrate { progress in
                if case .copied(let table, let rows, _) = progress { copied.add(table, rows) }
            }
            #expect(report.mismatches.isEmpty)
            let rows = Dictionary(uniqueKeysWithValues: report.tables.map { ($0.name, $0.targetRows) })
            #expect(rows["ledger_transactions", default: 0] >= 1000)
            #expect(rows["ledger_events", default: 0] > 1000)
            #expect(rows["ledger_proofs", default: 0] > 1000)
            #expect(rows["ledger_grants"] == 2)
            #expect(rows["ledger_transfers"] == 1)
            #expect(rows["ledger_deliveries", default: 0] > 0)
            #expect(rows["ledger_webhook_cursors"] == 1)
            #expect(rows["ledger_rollups", default: 0] > 0)
            #expect(rows["ledger_event_head"] == 1)
            #expect(rows["ledger_activity_days", default: 0] > 0)
            #expect(copied.tables == report.tables.map(\.name))
            // Every table of the source is copied, or is one SQLite keeps for itself (its schema
            // history, its event index, read into the target's event head, and the timeline
            // index, which the target keeps its own way): a table added to the schema without
            // a line in the migration fails here.
            let sqliteOnly: Set<String> = ["ledger_event_accounts", "ledger_event_index", "ledger_migrations", "sqlite_sequence"]
            let catalog = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5_000, readOnly: true)
            var sourceTables: Set<String> = []
            try catalog.query("SELECT name FROM sqlite_master WHERE type = 'table'") { row throws(LedgerError) in sourceTables.insert(row.text(0)) }
            catalog.close()
            #expect(sourceTables.isSuperset(of: sqliteOnly.subtracting(["sqlite_sequence"])))
            #expect(sourceTables.subtracting(sqliteOnly) == Set(report.tables.map(\.name)).subtracting(["ledger_event_head"]))

            let source = try SQLiteLedger(path: path, configuration: configuration)
            let target = try await PostgresForTests.open(url: url, configuration: configuration)
            do {
                let before = try await Self.events(source)
                #expect(try await Self.events(target) == before)
                let accounts = Set(before.map { (event: LedgerEvent) in event.account }).sorted { $0.rawValue < $1.rawValue }
                #expect(accounts.count >= 100)
                for account in accounts {
                    #expect(try await target.entitlements(for: account, at: Self.now) == source.entitlements(for: account, at: Self.now))
                }
                #expect(try await target.grants(for: Self.alice) == source.grants(for: Self.alice))
                // The sealed proofs open on the target with the same key: copied as stored.
                let transaction = try #require(try await source.transaction("migrate-2", in: AppStoreEnvironment.production))
                let digest = try #require(transaction.proofDigest)
                #expect(try await target.storedProof(digest) == source.storedProof(digest))
                #expect(try await target.checkIntegrity().problems == source.checkIntegrity().problems)
                // The per-day counts were copied, not counted again by the target's triggers.
                let activity = try await source.activity(days: 366, endingAt: Self.now)
                #expect(activity.contains { $0.purchases > 0 } && activity.contains { $0.activeSubscriptions > 0 })
                #expect(try await target.activity(days: 366, endingAt: Self.now) == activity)

                try await target.record(Purchases.proof(Purchases.nonConsumable("after-migration")), for: Self.alice)
                // From here on the target's triggers count: the purchase is the clock's day's.
                let today = try await target.activity(days: 1, endingAt: Self.now)
                #expect(today.first?.purchases == (try await source.activity(days: 1, endingAt: Self.now)).first.map { $0.purchases + 1 })
                let after = try await Self.events(target)
                let newest = try #require(before.last?.sequence)
                #expect(after.count > before.count)
                #expect(after[before.count].sequence == newest + 1)
            } catch {
                await source.close()
                await target.close()
                throw error
            }
            await source.close()
            await target.close()

            // The service's own writes since change the target: a digest tells.
            await #expect {
                try await LedgerMigration(from: "sqlite:" + path, to: url).verify()
            } throws: { error in
                (error as? LedgerMigrationError)?.code == .verificationFailed
            }
        }

        @Test("a non-empty target is refused, naming a table; a row changed after copying makes --verify-only fail naming its table")
        func refusalsAfterCopy() async throws {
            guard PostgresForTests.shouldRun else { return }
            let directory = try TemporaryFiles.directory("migrate")
            defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
            let configuration = try ScaleBenchmark.configuration(64)
            let path = try await Self.buildSource(in: directory, size: 200, configuration: configuration)
            let url = try await PostgresForTests.freshDatabase()
            let migration = try LedgerMigration(from: "sqlite:" + path, to: url)
            try await migration.migrate()
            #expect(try await migration.verify().mismatches.isEmpty)

            let again = await Self.error { try await migration.migrate() }
            #expect(again?.code == .targetNotEmpty)
            #expect(again?.table == "ledger_families")

            let ledger = try await PostgresLedger.connect(url: url, configuration: configuration, maximumConnections: 1)
            do {
                try await ledger.client.withConnection { connection in
                    _ = try await connection.query("UPDATE ledger_grants SET reason = 'changed' WHERE idempotency_key = 'g1'", logger: configuration.logger)
                }
            } catch {
                await ledger.close()
                throw error
            }
            await ledger.close()
            let changed = await Self.error { try await migration.verify() }
            #expect(changed?.code == .verificationFailed)
            #expect(changed?.table == "ledger_grants")
        }

        @Test("a missing source, a source at another schema version and an unreachable target are refused before anything is written")
        func sourceRefusals() async throws {
            let directory = try TemporaryFiles.directory("migrate")
            defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
            let unreachable = "postgres://storegate:hunter2@127.0.0.1:1/ledger?sslmode=disable"
            let missing = await Self.error {
                try await LedgerMigration(from: "sqlite:" + directory.appendingPathComponent("absent.sqlite").path, to: unreachable).migrate()
            }
            #expect(missing?.code == .sourceUnavailable)

            let path = directory.appendingPathComponent("ledger.sqlite").path
            await (try SQLiteLedger(path: path)).close()
            let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 1000)
            _ = try connection.run("DELETE FROM ledger_migrations WHERE version = 14")
            let older = await Self.error { try await LedgerMigration(from: "sqlite:" + path, to: unreachable).migrate() }
            #expect(older?.code == .sourceSchema)
            #expect(older?.reason.contains("start `storegate serve` on it once") == true)
            _ = try connection.run("INSERT INTO ledger_migrations (version, description, applied_at) VALUES (14, 'x', 0), (99, 'future', 0)")
            let newer = await Self.error { try await LedgerMigration(from: "sqlite:" + path, to: unreachable).verify() }
            #expect(newer?.code == .sourceSchema)
            #expect(newer?.reason.contains("upgrade StoreGate first") == true)
            _ = try connection.run("DELETE FROM ledger_migrations WHERE version = 99")
            connection.close()

            let notLedger = directory.appendingPathComponent("other.txt")
            try Data("not a database at all, not even close to one".utf8).write(to: notLedger)
            #expect(await Self.error { try await LedgerMigration(from: "sqlite:" + notLedger.path, to: unreachable).migrate() }?.code == .sourceUnavailable)

            var migration = try LedgerMigration(from: "sqlite:" + path, to: unreachable)
            migration.connectTimeout = .seconds(5)
            let offline = await Self.error { try await migration.migrate() }
            #expect(offline?.code == .targetUnavailable)
            #expect(offline.map { !$0.description.contains("hunter2") } == true)
            #expect(offline?.description.contains("storegate:***@127.0.0.1:1") == true)
        }

        @Test(
            "locations that are not sqlite:PATH to postgres://user@host/db are refused by code",
            arguments: [
                ("sqlite:", "postgres://u@h/db", LedgerMigrationError.Code.invalidLocation),
                ("mysql://u@h/db", "postgres://u@h/db", .invalidLocation),
                ("ledger.sqlite", "postgres://u@h/db", .invalidLocation),
                ("sqlite:/tmp/l.sqlite", "postgres://h/db", .invalidLocation),
                ("sqlite:/tmp/l.sqlite", "postgres://u:pw@h", .invalidLocation),
                ("sqlite:/tmp/l.sqlite", "http://u@h/db", .invalidLocation),
                ("sqlite:/tmp/l.sqlite", "sqlite:/tmp/m.sqlite", .unsupportedDirection),
                ("postgres://u@h/db", "sqlite:/tmp/l.sqlite", .unsupportedDirection),
                ("postgres://u@h/db", "postgres://u@h/other", .unsupportedDirection),
            ]
        )
        func badLocations(from: String, to: String, code: LedgerMigrationError.Code) {
            #expect {
                _ = try LedgerMigration(from: from, to: to)
            } throws: { error in
                (error as? LedgerMigrationError)?.code == code
            }
        }

        @Test("a URL's password never appears in a location or an error")
        func maskedPassword() throws {
            let location = try LedgerLocation(parsing: "postgresql://app:s3cr%40t@db.example:5433/ledger?sslmode=require")
            #expect(location.description == "postgresql://app:***@db.example:5433/ledger?sslmode=require")
            #expect(try LedgerLocation(parsing: "postgres://app@db/ledger").description == "postgres://app@db/ledger")
            #expect(try LedgerLocation(parsing: "sqlite:/var/lib/l.sqlite") == .sqlite(path: "/var/lib/l.sqlite"))
            #expect(try LedgerLocation(parsing: "sqlite:///var/lib/l.sqlite") == .sqlite(path: "/var/lib/l.sqlite"))
            do {
                _ = try LedgerLocation(parsing: "postgres://app:hunter2@/ledger")
                Issue.record("a URL without a host was accepted")
            } catch {
                #expect(error.code == .invalidLocation)
                #expect(!error.description.contains("hunter2"))
            }
        }

        static func error(_ body: () async throws -> Void) async -> LedgerMigrationError? {
            do {
                try await body()
                return nil
            } catch let error as LedgerMigrationError {
                return error
            } catch {
                Issue.record("not a LedgerMigrationError: \(error)")
                return nil
            }
        }
    }
}

/// The tables the progress reported copied, in order.
private final class Copied: @unchecked Sendable {
    // @unchecked: the migration reports progress from one task at a time; the lock is for the reader.
    private let lock = NSLock()
    private var names: [String] = []
    func add(_ table: String, _ rows: Int) { lock.withLock { names.append(table) } }
    var tables: [String] { lock.withLock { names } }
}

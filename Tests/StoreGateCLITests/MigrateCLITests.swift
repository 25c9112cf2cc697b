import Foundation
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Testing

/// `storegate migrate` as an operator runs it: a line per table, a summary, exit 0 when every
/// table is equal; one line naming the failure, exit 1, and never a password otherwise.
@Suite("storegate migrate")
struct MigrateCLITests {
    @Test("a missing source, a bad URL and an unreachable target exit 1 with one line that never shows the password")
    func refusals() async throws {
        let directory = try TemporaryFiles.directory("migrate-cli")
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
        let target = "postgres://storegate:hunter2@127.0.0.1:1/ledger?sslmode=disable"

        let missing = try await CLI.run(["migrate", "--from", "sqlite:" + directory.appendingPathComponent("absent.sqlite").path, "--to", target])
        #expect(missing.status == 1)
        #expect(missing.stderr.contains("source_unavailable"))

        let badURL = try await CLI.run(["migrate", "--from", "sqlite:/x.sqlite", "--to", "postgres://storegate:hunter2@/ledger"])
        #expect(badURL.status == 1)
        #expect(badURL.stderr.contains("invalid_location"))
        #expect(!badURL.stderr.contains("hunter2"))

        let path = directory.appendingPathComponent("ledger.sqlite").path
        await (try SQLiteLedger(path: path)).close()
        let offline = try await CLI.run(["migrate", "--from", "sqlite:" + path, "--to", target, "--connect-timeout", "5"])
        #expect(offline.status == 1)
        #expect(offline.stderr.contains("target_unavailable"))
        #expect(!(offline.stderr + offline.stdout).contains("hunter2"))
        #expect(offline.stderr.contains("storegate:***@127.0.0.1:1"))
    }

    @Test("an empty ledger migrates to a new database table by table, then --verify-only finds both sides equal")
    func migratesAndVerifies() async throws {
        guard TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired else { return }
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        defer { server.stop() }
        let url = try await server.makeDatabase()
        let directory = try TemporaryFiles.directory("migrate-cli")
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
        let path = directory.appendingPathComponent("ledger.sqlite").path
        await (try SQLiteLedger(path: path)).close()

        let migrated = try await CLI.run(["migrate", "--from", "sqlite:" + path, "--to", url])
        #expect(migrated.status == 0, "\(migrated.stderr)")
        let lines = migrated.stdout.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("copied   ledger_transactions") && $0.contains("rows/s") })
        #expect(lines.contains { $0.hasPrefix("compared ledger_events") && $0.contains("equal") })
        #expect(lines.last?.hasPrefix("migrated sqlite:\(path) to ") == true)

        let verified = try await CLI.run(["migrate", "--from", "sqlite:" + path, "--to", url, "--verify-only"])
        #expect(verified.status == 0, "\(verified.stderr)")
        #expect(!verified.stdout.contains("copied"))
        #expect(verified.stdout.split(separator: "\n").last?.hasPrefix("verified ") == true)
    }
}

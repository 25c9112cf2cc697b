import ArgumentParser
import Foundation
import Logging
import StoreGateLedgerMigration

/// `storegate migrate`: moves a whole SQLite ledger into an empty PostgreSQL database and
/// verifies the copy (docs/migrate.md); `--verify-only` compares without copying.
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "migrate",
        abstract: "Move a whole ledger from SQLite to PostgreSQL, verified by counts and checksums.",
        discussion: """
            Stop the service first. The source is opened read-only and must be at this StoreGate's \
            schema version (start the service on it once to migrate it). The target database must \
            hold no ledger rows; it is created with the PostgreSQL ledger's own migrations, filled \
            table by table in key order, its event numbering moved past the copied events, and \
            analyzed. Every table is then compared on both sides: row count and SHA-256 over its rows \
            in key order. Exit 0 when every table is equal; 1 on any refusal, failure or difference \
            (the line names the table). Sealed proofs, webhook secrets and API key digests are \
            copied as stored; passwords in URLs are masked in every message. docs/migrate.md.

              storegate migrate --from sqlite:/var/lib/storegate/ledger.sqlite --to postgres://storegate@db/storegate
              storegate migrate --from sqlite:/var/lib/storegate/ledger.sqlite --to postgres://storegate@db/storegate --verify-only
            """
    )

    @Option(name: .customLong("from"), help: "The source ledger: sqlite:PATH.")
    var from: String

    @Option(name: .customLong("to"), help: "The target: postgres://user[:password]@host[:port]/database[?sslmode=…].")
    var to: String

    @Flag(name: .customLong("verify-only"), help: "Compare both sides (counts and digests) without copying.")
    var verifyOnly = false

    @Option(name: .customLong("batch-rows"), help: "Rows per COPY statement and transaction.")
    var batchRows: Int = 5000

    @Option(name: .customLong("connect-timeout"), help: "Seconds to wait for the first PostgreSQL connection.")
    var connectTimeout: Int = 30

    func validate() throws {
        guard batchRows >= 1, batchRows <= 1_000_000 else { throw ValidationError("--batch-rows takes 1 to 1000000") }
        guard connectTimeout >= 1 else { throw ValidationError("--connect-timeout takes at least 1 second") }
    }

    func run() async throws {
        var logger = Logger(label: "storegate.migrate")
        logger.logLevel = .warning
        do {
            let migration = try LedgerMigration(
                from: from, to: to, batchRows: batchRows, connectTimeout: .seconds(connectTimeout), logger: logger
            )
            let started = Date()
            let report = verifyOnly ? try await migration.verify(progress: Self.print) : try await migration.migrate(progress: Self.print)
            let rows = report.tables.reduce(0) { $0 + $1.sourceRows }
            let verb = verifyOnly ? "verified" : "migrated"
            Self.line(
                "\(verb) \(migration.source) to \(migration.target): \(report.tables.count) tables, \(rows) rows equal on both sides, "
                    + String(format: "%.1f s", Date().timeIntervalSince(started))
            )
        } catch {
            throw CLIError(error.description)
        }
    }

    /// One line per step: a table copied (rows, rows/s), the sequences and statistics, a table compared.
    @Sendable static func print(_ progress: LedgerMigrationProgress) {
        switch progress {
        case .copied(let table, let rows, let seconds):
            line("copied   \(pad(table)) \(pad(String(rows), 9, left: true)) rows in " + String(format: "%7.1f s (%.0f rows/s)", seconds, Double(rows) / max(seconds, 1e-6)))
        case .finished(let seconds):
            line("sequences moved past the copied events, ANALYZE done in " + String(format: "%.1f s", seconds))
        case .compared(let table, let seconds):
            let verdict = table.isEqual ? "equal" : "DIFFERENT (source \(table.sourceRows) rows \(table.sourceDigest.prefix(16)), target \(table.targetRows) rows \(table.targetDigest.prefix(16)))"
            line(
                "compared \(pad(table.name)) \(pad(String(table.sourceRows), 9, left: true)) rows, sha256 \(table.sourceDigest.prefix(16)): \(verdict) "
                    + String(format: "(%.1f s)", seconds)
            )
        }
    }

    /// Writes one line to standard output at once (unbuffered: a line per table as it ends).
    private static func line(_ text: String) {
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }

    private static func pad(_ text: String, _ width: Int = 29, left: Bool = false) -> String {
        guard text.count < width else { return text }
        let fill = String(repeating: " ", count: width - text.count)
        return left ? fill + text : text + fill
    }
}

import Foundation
import Logging
import NIOCore
import PostgresNIO
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerPostgres

/// A PostgreSQL database as a migration's target (or a side of a verification): checked empty,
/// created to the current schema by the PostgreSQL ledger's own migrations, filled with `COPY`,
/// its sequences moved past the copied rows, analyzed; read back in key order for the digests.
struct PostgresLedgerTarget: Sendable {
    /// The URL with its password masked, for messages.
    let location: String
    let client: PostgresClient
    let logger: Logger

    /// Runs `body` with a target on `url`, its connection pool running for as long as `body` runs.
    ///
    /// - Throws: ``LedgerMigrationError/Code/invalidLocation`` for a URL PostgresNIO cannot use;
    ///   ``LedgerMigrationError/Code/targetUnavailable`` when no connection opens within
    ///   `connectTimeout`; whatever `body` throws.
    static func withTarget<T: Sendable>(
        url: String, logger: Logger, connectTimeout: Duration,
        _ body: @Sendable (PostgresLedgerTarget) async throws(LedgerMigrationError) -> T
    ) async throws(LedgerMigrationError) -> T {
        let location = LedgerLocation.masked(url)
        let client: PostgresClient
        do {
            client = try PostgresLedger.client(url: url, maximumConnections: 2, logger: logger)
        } catch {
            throw LedgerMigrationError(.invalidLocation, reason: "\(location): \(error.reason)")
        }
        let target = PostgresLedgerTarget(location: location, client: client, logger: logger)
        let result: Result<T, LedgerMigrationError> = await withTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            do throws(LedgerMigrationError) {
                try await target.ping(within: connectTimeout)
                return .success(try await body(target))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Returns once a query answers, or fails after `timeout` (a wrong host or port would
    /// otherwise keep the pool trying).
    private func ping(within timeout: Duration) async throws(LedgerMigrationError) {
        let client = self.client
        let logger = self.logger
        let outcome: Result<Void, any Error>? = await withTaskGroup(of: Result<Void, any Error>?.self) { group in
            group.addTask {
                do {
                    try await client.withConnection { connection in _ = try await connection.query("SELECT 1", logger: logger) }
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }
            group.addTask {
                try? await Task.sleep(for: timeout)  // cancelled when the query answers first
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            return first
        }
        switch outcome {
        case .success: return
        case .failure(let error): throw failure(.targetUnavailable, nil, "cannot connect", error)
        case nil: throw LedgerMigrationError(.targetUnavailable, reason: "\(location): no connection within \(timeout)")
        }
    }

    /// A migration error for a PostgreSQL failure: the server's message and SQLSTATE only.
    func failure(_ code: LedgerMigrationError.Code, _ table: String?, _ what: String, _ error: any Error) -> LedgerMigrationError {
        if let error = error as? LedgerMigrationError { return error }
        return LedgerMigrationError(code, table: table, reason: "\(location): \(what): \(PostgresLedger.describe(error))")
    }

    // MARK: Preparing

    /// Refuses a database holding any row of `tables` (a ledger table's singleton counts once it
    /// moved from its initial state: events were numbered), before anything is written to it.
    func checkEmpty(_ tables: [MigratedTable]) async throws(LedgerMigrationError) {
        let logger = self.logger
        let found: String?
        do {
            found = try await client.withConnection { connection -> String? in
                for table in tables {
                    let exists = try await connection.query(
                        "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = \(table.name)", logger: logger
                    ).collect().first?.decode(Int64.self) ?? 0
                    guard exists > 0 else { continue }
                    let probe = table.name == "ledger_event_head"
                        ? "SELECT count(*) FROM ledger_event_head WHERE last <> 0 OR pruned_through <> 0"
                        : table.isSingleton ? "SELECT 0" : "SELECT count(*) FROM (SELECT 1 FROM \(table.name) LIMIT 1) t"
                    let rows = try await connection.query(PostgresQuery(unsafeSQL: probe), logger: logger).collect().first?.decode(Int64.self) ?? 0
                    if rows > 0 { return table.name }
                }
                return nil
            }
        } catch {
            throw failure(.targetUnavailable, nil, "cannot read the target", error)
        }
        if let found {
            throw LedgerMigrationError(
                .targetNotEmpty, table: found, reason: "\(location) already holds rows in \(found): migrate fills an empty database only"
            )
        }
    }

    /// Creates the schema with the PostgreSQL ledger's own migrations, then checks the version.
    func migrate() async throws(LedgerMigrationError) {
        let ledger = PostgresLedger(client: client, configuration: LedgerConfiguration(logger: logger))
        do {
            try await ledger.migrate()
        } catch {
            let code: LedgerMigrationError.Code = error.code == .schemaTooNew ? .targetSchema : .targetUnavailable
            throw LedgerMigrationError(code, reason: "\(location): \(error.reason)")
        }
        try await checkSchema()
    }

    /// Refuses a database whose `ledger_migrations` is not exactly this StoreGate's.
    func checkSchema() async throws(LedgerMigrationError) {
        let logger = self.logger
        let versions: Set<Int>
        do {
            versions = try await client.withConnection { connection -> Set<Int> in
                let exists = try await connection.query(
                    "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'ledger_migrations'", logger: logger
                ).collect().first?.decode(Int64.self) ?? 0
                guard exists > 0 else { return [] }
                var versions: Set<Int> = []
                for try await version in try await connection.query("SELECT version FROM ledger_migrations", logger: logger).decode(Int64.self) {
                    versions.insert(Int(version))
                }
                return versions
            }
        } catch {
            throw failure(.targetUnavailable, nil, "cannot read the schema version", error)
        }
        let known = PostgresLedger.schemaVersions
        guard versions == Set(known) else {
            throw LedgerMigrationError(
                .targetSchema,
                reason: "\(location) has schema version \(versions.max() ?? 0); this StoreGate's is \(known.max() ?? 0)"
                    + (versions.isEmpty ? " (not a StoreGate ledger)" : "")
            )
        }
    }

    // MARK: Copying

    /// Writes one batch of `table` with `COPY … FROM STDIN` (one statement, one transaction);
    /// a singleton's row replaces the one the migrations inserted, in the same transaction.
    ///
    /// The transaction sets `storegate.copying`: the triggers that keep `ledger_activity_days`
    /// from the events and transactions stand aside, since that table is copied as well.
    func copy(_ table: MigratedTable, _ text: CopyText) async throws(LedgerMigrationError) {
        let logger = self.logger
        let buffer = text.buffer
        do {
            try await client.withConnection { connection in
                // The copy is verified before it is used; a crash midway means starting again
                // on an empty database anyway.
                _ = try await connection.query("SET synchronous_commit = off", logger: logger)
                _ = try await connection.query("BEGIN", logger: logger)
                do {
                    _ = try await connection.query("SET LOCAL storegate.copying = 'on'", logger: logger)
                    if table.isSingleton {
                        _ = try await connection.query(PostgresQuery(unsafeSQL: "DELETE FROM \(table.name)"), logger: logger)
                    }
                    try await connection.copyFrom(table: table.name, columns: table.copyColumns, logger: logger) { writer in
                        try await writer.write(buffer)
                    }
                    _ = try await connection.query("COMMIT", logger: logger)
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)  // the copy's error is what matters
                    throw error
                }
            }
        } catch {
            throw failure(.copyFailed, table.name, "the copy of \(table.name) failed", error)
        }
    }

    /// Moves every sequence of the copied tables past the rows copied (the events' positions),
    /// then updates the planner's statistics (`ANALYZE`); the numbering of events continues from
    /// the copied event head.
    func finish() async throws(LedgerMigrationError) {
        let logger = self.logger
        do {
            try await client.withConnection { connection in
                _ = try await connection.query("""
                    SELECT setval(pg_get_serial_sequence('ledger_events', 'position'), GREATEST(MAX(position), 1), MAX(position) IS NOT NULL)
                    FROM ledger_events
                    """, logger: logger)
                _ = try await connection.query("ANALYZE", logger: logger)
            }
        } catch {
            throw failure(.copyFailed, nil, "resetting sequences and analyzing failed", error)
        }
    }

    // MARK: Reading

    /// Counts `table`'s rows and computes their digest, reading them in key order (text keys in
    /// byte order, as SQLite sorts them) in one read-only snapshot.
    func digest(_ table: MigratedTable) async throws(LedgerMigrationError) -> TableDigest {
        let logger = self.logger
        let select = table.columns.map { $0.kind == .json ? "\($0.name)::text" : $0.name }.joined(separator: ", ")
        let order = table.key.map { key -> String in
            table.columns.first { $0.name == key }?.kind == .text ? "\(key) COLLATE \"C\"" : key
        }
        let sql = "SELECT \(select) FROM \(table.name)" + (order.isEmpty ? "" : " ORDER BY \(order.joined(separator: ", "))")
        let columns = table.columns
        let tableName = table.name
        do {
            return try await client.withConnection { connection -> TableDigest in
                _ = try await connection.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", logger: logger)
                var digest = TableDigest()
                do {
                    for try await row in try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger) {
                        var index = 0
                        for cell in row {
                            try Self.add(cell, columns[index], table: tableName, to: &digest)
                            index += 1
                        }
                        digest.endRow()
                    }
                    _ = try await connection.query("COMMIT", logger: logger)
                } catch {
                    _ = try? await connection.query("ROLLBACK", logger: logger)  // the read's error is what matters
                    throw error
                }
                return digest
            }
        } catch {
            throw failure(.targetUnavailable, table.name, "reading \(table.name) failed", error)
        }
    }

    private static func add(_ cell: PostgresCell, _ column: MigratedTable.Column, table: String, to digest: inout TableDigest) throws {
        guard cell.bytes != nil else {
            digest.appendNull()
            return
        }
        switch column.kind {
        case .integer: digest.appendInteger(try cell.decode(Int64.self))
        case .boolean: digest.appendInteger(try cell.decode(Bool.self) ? 1 : 0)
        case .text: digest.appendText(try cell.decode(String.self).utf8)
        case .blob:
            let buffer = try cell.decode(ByteBuffer.self)
            digest.appendBlob(buffer.readableBytesView)
        case .json:
            let text = try cell.decode(String.self)
            switch JSONReader.readObject(Array(text.utf8)) {
            case .success(let object): digest.appendJSON(.object(object))
            case .failure(let failure):
                throw LedgerMigrationError(.verificationFailed, table: table, reason: "\(column.name) is not a JSON object (\(failure.reason))")
            }
        }
    }
}

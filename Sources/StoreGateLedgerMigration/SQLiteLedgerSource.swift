import Foundation
import NIOCore
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerSQLite

/// A SQLite ledger opened read-only as a migration's source: one read transaction (one
/// snapshot) for every table, read in key order in batches, each value checked against its
/// column's kind and added to the table's digest as it is read.
///
/// `@unchecked Sendable` because one caller uses it at a time: the migration reads its batches
/// one after another (each on a thread of NIO's blocking pool), never two at once.
final class SQLiteLedgerSource: @unchecked Sendable {
    /// A batch of rows read.
    struct Batch {
        /// The rows as `COPY` text, when the caller asked for it.
        var copy: CopyText?
        /// How many rows.
        var rows: Int
        /// The key of the batch's last row: where the next batch starts. `nil` when the batch
        /// was empty.
        var lastKey: [SQLiteValue]?
    }

    let path: String
    private let connection: SQLiteConnection
    /// Each table's digest over the rows read so far.
    private(set) var digests: [String: TableDigest] = [:]

    /// Opens `path` read-only, starts the read transaction and checks the schema version.
    ///
    /// - Throws: ``LedgerMigrationError/Code/sourceUnavailable`` when the file is missing or
    ///   not a database; ``LedgerMigrationError/Code/sourceSchema`` when it is not a ledger at
    ///   this StoreGate's schema version.
    init(path: String) throws(LedgerMigrationError) {
        self.path = path
        guard FileManager.default.fileExists(atPath: path) else {
            throw LedgerMigrationError(.sourceUnavailable, reason: "sqlite:\(path): no such file")
        }
        do {
            connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000, readOnly: true)
            try connection.execute("BEGIN")
        } catch {
            throw LedgerMigrationError(.sourceUnavailable, reason: "sqlite:\(path): \(error.reason)")
        }
        try checkSchema()
    }

    deinit {
        connection.close()  // the read transaction ends with the connection
    }

    private func checkSchema() throws(LedgerMigrationError) {
        var versions: Set<Int> = []
        do {
            var hasTable = false
            try connection.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger_migrations'") { _ in hasTable = true }
            guard hasTable else {
                throw LedgerMigrationError(.sourceSchema, reason: "sqlite:\(path) is not a StoreGate ledger (it has no ledger_migrations table)")
            }
            try connection.query("SELECT version FROM ledger_migrations") { row in versions.insert(Int(row.integer(0))) }
        } catch let error as LedgerMigrationError {
            throw error
        } catch let error as LedgerError {
            throw LedgerMigrationError(.sourceUnavailable, reason: "sqlite:\(path): \(error.reason)")
        } catch {
            throw LedgerMigrationError(.sourceUnavailable, reason: "sqlite:\(path): \(error)")
        }
        let known = SQLiteLedger.schemaVersions
        let current = known.max() ?? 0
        let found = versions.max() ?? 0
        guard versions != Set(known) else { return }
        if found > current {
            throw LedgerMigrationError(
                .sourceSchema, reason: "sqlite:\(path) has schema version \(found), newer than this StoreGate's \(current): upgrade StoreGate first"
            )
        }
        throw LedgerMigrationError(
            .sourceSchema,
            reason: "sqlite:\(path) has schema version \(found); this StoreGate's is \(current): start `storegate serve` on it once (it migrates at start-up), then migrate"
        )
    }

    /// Reads up to `limit` rows of `table` after `key` (from the start when `nil`), adding them
    /// to the table's digest, as `COPY` text too when `copy`.
    ///
    /// Stops early once the `COPY` text passes `maximumBytes` (sealed proofs are large).
    ///
    /// - Throws: ``LedgerMigrationError/Code/sourceValue`` for a value not of its column's
    ///   kind; ``LedgerMigrationError/Code/sourceUnavailable`` when SQLite fails.
    func read(
        _ table: MigratedTable, after key: [SQLiteValue]?, limit: Int, copy: Bool, maximumBytes: Int = 8 << 20
    ) throws(LedgerMigrationError) -> Batch {
        var digest = digests[table.name] ?? TableDigest()
        var text: CopyText? = copy ? CopyText() : nil
        var rows = 0
        var lastKey: [SQLiteValue]?
        var failure: LedgerMigrationError?
        let keyIndexes = table.keyIndexes
        let copiedAlso = table.copiedAlso.compactMap { extra in table.columns.firstIndex { $0.name == extra.from } }
        let sql = Self.select(table, after: key != nil, limit: limit)
        do {
            try connection.query(sql, key ?? []) { row throws(LedgerError) in
                guard failure == nil, text.map({ $0.buffer.readableBytes < maximumBytes }) ?? true else { return }
                do throws(LedgerMigrationError) {
                    for (index, column) in table.columns.enumerated() {
                        try Self.add(row, Int32(index), column, table: table.name, digest: &digest, copy: &text)
                    }
                    for index in copiedAlso {
                        try Self.add(row, Int32(index), table.columns[index], table: table.name, digest: &digest, hashing: false, copy: &text)
                    }
                    digest.endRow()
                    text?.endRow()
                    rows += 1
                    var values: [SQLiteValue] = []
                    for index in keyIndexes {
                        let column = Int32(index)
                        switch row.storageClass(column) {
                        case .integer: values.append(.integer(row.integer(column)))
                        case .text: values.append(.text(row.text(column)))
                        case .blob: values.append(.blob(row.blob(column)))
                        case .null, .real:
                            throw LedgerMigrationError(.sourceValue, table: table.name, reason: "a key column (\(table.columns[index].name)) is null or real")
                        }
                    }
                    lastKey = values
                } catch {
                    failure = error
                }
            }
        } catch {
            throw LedgerMigrationError(.sourceUnavailable, table: table.name, reason: "sqlite:\(path): \(error.reason)")
        }
        if let failure { throw failure }
        digests[table.name] = digest
        return Batch(copy: text, rows: rows, lastKey: lastKey)
    }

    /// The batch query: the table's columns (and those a copy repeats) in key order, after the
    /// last key read (a row-value comparison, which SQLite answers from the key's index).
    static func select(_ table: MigratedTable, after: Bool, limit: Int) -> String {
        var sql = "SELECT \(table.columnList) FROM \(table.sqliteSource ?? table.name)"
        guard !table.key.isEmpty else { return sql }
        if after {
            let placeholders = Array(repeating: "?", count: table.key.count).joined(separator: ", ")
            sql += " WHERE (\(table.key.joined(separator: ", "))) > (\(placeholders))"
        }
        return sql + " ORDER BY \(table.key.joined(separator: ", ")) LIMIT \(limit)"
    }

    /// Checks one value against its column's kind and adds it to the digest (when `hashing`)
    /// and the copy.
    private static func add(
        _ row: SQLiteRow, _ index: Int32, _ column: MigratedTable.Column, table: String, digest: inout TableDigest, hashing: Bool = true,
        copy: inout CopyText?
    ) throws(LedgerMigrationError) {
        let storage = row.storageClass(index)
        func mismatch(_ what: String) -> LedgerMigrationError {
            LedgerMigrationError(.sourceValue, table: table, reason: "column \(column.name) holds \(what) where the schema says \(column.kind)")
        }
        if storage == .null {
            if hashing { digest.appendNull() }
            copy?.appendNull()
            return
        }
        switch column.kind {
        case .integer:
            guard storage == .integer else { throw mismatch("\(storage)") }
            let value = row.integer(index)
            if hashing { digest.appendInteger(value) }
            copy?.appendInteger(value)
        case .boolean:
            guard storage == .integer else { throw mismatch("\(storage)") }
            let value = row.integer(index)
            guard value == 0 || value == 1 else { throw mismatch("the integer \(value)") }
            if hashing { digest.appendInteger(value) }
            copy?.appendBoolean(value == 1)
        case .text:
            guard storage == .text else { throw mismatch("\(storage)") }
            let bytes = row.bytes(index)
            guard String(validating: bytes, as: UTF8.self) != nil, !bytes.contains(0) else { throw mismatch("text that is not UTF-8 (or holds NUL)") }
            if hashing { digest.appendText(bytes) }
            copy?.appendText(bytes)
        case .blob:
            guard storage == .blob else { throw mismatch("\(storage)") }
            let bytes = row.bytes(index)
            if hashing { digest.appendBlob(bytes) }
            copy?.appendBlob(bytes)
        case .json:
            guard storage == .blob || storage == .text else { throw mismatch("\(storage)") }
            let bytes = row.bytes(index)
            guard String(validating: bytes, as: UTF8.self) != nil, !bytes.contains(0) else { throw mismatch("bytes that are not UTF-8 JSON") }
            if hashing {
                switch JSONReader.readObject(bytes) {
                case .success(let object): digest.appendJSON(.object(object))
                case .failure(let failure): throw mismatch("bytes that are not a JSON object (\(failure.reason))")
                }
            }
            copy?.appendText(bytes)
        }
    }
}

import CSQLite
package import StoreGateLedger

/// One SQLite connection (the amalgamation CSQLite compiles), with its prepared statements cached
/// by SQL text.
///
/// `@unchecked Sendable` because one thread uses it at a time: the writer connection only on
/// ``SQLiteWriter``'s thread, a reader only while taken out of the reader pool for one call.
/// SQLite itself runs in multi-thread mode (`SQLITE_OPEN_NOMUTEX`), which allows exactly this.
package final class SQLiteConnection: @unchecked Sendable {
    private let handle: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]
    private var isClosed = false
    /// Events appended on this connection since the timeline index last caught up
    /// (``SQLiteTimelineIndex``): a hint for when to index next.
    var eventsSinceIndexing = 0
    /// The encoded rollup changes of a group commit's jobs, back to back, queued as one row
    /// just before it commits (``SQLiteWriter``); `nil` outside a group commit, where a write
    /// queues its own row.
    var stagedRollupChanges: [UInt8]?
    /// The WAL frames at which the writer next restarts the log (``SQLiteCheckpointer/restartLogIfLong(_:every:busyTimeoutMilliseconds:)``).
    var nextLogRestart = SQLiteCheckpointer.restartFrames

    /// The process-wide settings (``storegate_sqlite3_configure``), applied before the first
    /// connection opens.
    private static let configured: Int32 = storegate_sqlite3_configure()

    /// Opens (creating when `create`) the database at `path`.
    ///
    /// Deleted content is not overwritten with zeros (`secure_delete`, on in Debian's build):
    /// the ledger deletes almost nothing, and what it stores of proofs is sealed or a digest.
    ///
    /// `readOnly` opens it with `SQLITE_OPEN_READONLY` (never created, never written: what
    /// `storegate migrate` reads its source with).
    package init(path: String, create: Bool, busyTimeoutMilliseconds: Int32, readOnly: Bool = false) throws(LedgerError) {
        _ = Self.configured
        var pointer: OpaquePointer?
        var flags = (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
        if create && !readOnly { flags |= SQLITE_OPEN_CREATE }
        let status = sqlite3_open_v2(path, &pointer, flags, nil)
        guard let pointer else {
            throw LedgerError(.storage, reason: "SQLite could not allocate a connection (status \(status))")
        }
        guard status == SQLITE_OK else {
            let message = String(cString: sqlite3_errmsg(pointer))
            sqlite3_close_v2(pointer)
            throw LedgerError(.storage, reason: "SQLite could not open the database: \(message)")
        }
        handle = pointer
        sqlite3_busy_timeout(handle, busyTimeoutMilliseconds)
        if !readOnly { try execute("PRAGMA secure_delete = OFF") }
    }

    deinit {
        close()
    }

    /// Finalizes every statement and closes the connection.
    package func close() {
        guard !isClosed else { return }
        isClosed = true
        for statement in statements.values { sqlite3_finalize(statement) }
        statements.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Whether a transaction is open (SQLite rolls one back by itself after some errors).
    package var isInTransaction: Bool {
        !isClosed && sqlite3_get_autocommit(handle) == 0
    }

    /// The WAL-index header's commit counter, last frame and salts, read from the shared memory
    /// this connection mapped when it last read the WAL (`storegate_sqlite3_wal_index_version`):
    /// no transaction, no lock. `nil` when it cannot tell (nothing mapped yet, a write in
    /// progress at that instant): ask `PRAGMA data_version` instead.
    func walIndexVersion() -> (change: UInt32, lastFrame: UInt32, salt1: UInt32, salt2: UInt32)? {
        guard !isClosed else { return nil }
        var version = storegate_wal_index_version()
        guard storegate_sqlite3_wal_index_version(handle, &version) == 1 else { return nil }
        return (version.change, version.lastFrame, version.salt1, version.salt2)
    }

    /// Checkpoints the whole WAL and waits — at most `milliseconds`, then SQLite's busy handler
    /// gives up — until no reader uses it, so that the next commit writes the log from its
    /// start (`PRAGMA wal_checkpoint(RESTART)`, outside a transaction).
    ///
    /// - Returns: Whether it restarted the log; `false` when a reader or another checkpoint
    ///   kept it busy (it then checkpointed what it could, as a passive checkpoint does).
    package func restartWriteAheadLog(waitingAtMost milliseconds: Int32, thenWaiting usual: Int32) throws(LedgerError) -> Bool {
        sqlite3_busy_timeout(handle, milliseconds)
        defer { sqlite3_busy_timeout(handle, usual) }
        var busy = true
        try query("PRAGMA wal_checkpoint(RESTART)") { row throws(LedgerError) in busy = row.integer(0) != 0 }
        return !busy
    }

    /// Runs SQL without parameters or results (pragmas, DDL, BEGIN/COMMIT).
    package func execute(_ sql: String) throws(LedgerError) {
        var message: UnsafeMutablePointer<CChar>?
        let status = sqlite3_exec(handle, sql, nil, nil, &message)
        if status != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? "status \(status)"
            sqlite3_free(message)
            throw error(status, text)
        }
    }

    /// Runs a cached statement with `binds`, one for each of its parameters, calling `row` for
    /// each result row.
    ///
    /// The values stay bound after the statement is reset, until its next use binds every
    /// parameter again. (`sqlite3_clear_bindings` would expire the statement whenever the
    /// planner noted that a bound value may change its plan — as it does for every `column =
    /// ?` filter that no index serves — and each use then compiled the SQL again.)
    package func query(_ sql: String, _ binds: [SQLiteValue] = [], row: (SQLiteRow) throws(LedgerError) -> Void) throws(LedgerError) {
        let statement = try prepared(sql)
        defer { sqlite3_reset(statement) }
        let parameters = Int(sqlite3_bind_parameter_count(statement))
        guard binds.count == parameters else {
            throw LedgerError(.storage, reason: "a statement of \(parameters) parameters was given \(binds.count) values")
        }
        try bind(binds, to: statement)
        while true {
            let status = sqlite3_step(statement)
            if status == SQLITE_ROW {
                try row(SQLiteRow(statement: statement))
            } else if status == SQLITE_DONE {
                return
            } else {
                throw error(status, String(cString: sqlite3_errmsg(handle)))
            }
        }
    }

    /// Runs a cached statement and returns the number of rows it changed.
    @discardableResult
    package func run(_ sql: String, _ binds: [SQLiteValue] = []) throws(LedgerError) -> Int {
        try query(sql, binds) { _ throws(LedgerError) in }
        return Int(sqlite3_changes(handle))
    }

    /// Runs `body` in a transaction (`BEGIN IMMEDIATE` for writes), rolling back on error.
    package func transaction<T>(immediate: Bool, _ body: () throws(LedgerError) -> T) throws(LedgerError) -> T {
        try run(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            _ = try? run("ROLLBACK")  // the original error is what matters; a failed rollback leaves no transaction open
            throw error
        }
    }

    /// How many times SQLite compiled the cached statement `sql` again after preparing it (a
    /// schema change, or a bound value its plan depends on); `nil` when it is not cached.
    func recompilations(of sql: String) -> Int? {
        statements[sql].map { Int(sqlite3_stmt_status($0, SQLITE_STMTSTATUS_REPREPARE, 0)) }
    }

    private func prepared(_ sql: String) throws(LedgerError) -> OpaquePointer {
        if isClosed { throw LedgerError(.closed, reason: "the SQLite connection is closed") }
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard status == SQLITE_OK, let statement else {
            throw error(status, String(cString: sqlite3_errmsg(handle)))
        }
        statements[sql] = statement
        return statement
    }

    private func bind(_ binds: [SQLiteValue], to statement: OpaquePointer) throws(LedgerError) {
        for (offset, value) in binds.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .null:
                status = sqlite3_bind_null(statement, index)
            case .integer(let number):
                status = sqlite3_bind_int64(statement, index, number)
            case .text(let text):
                var copy = text
                status = copy.withUTF8 { buffer in
                    // An empty buffer may have no base address, which SQLite would read as NULL.
                    let base = buffer.baseAddress.map { UnsafeRawPointer($0) } ?? UnsafeRawPointer(emptyBytes)
                    return sqlite3_bind_text(statement, index, base.assumingMemoryBound(to: CChar.self), Int32(buffer.count), transientDestructor)
                }
            case .blob(let bytes):
                status = bytes.withUnsafeBytes { buffer in
                    let base = buffer.baseAddress ?? UnsafeRawPointer(emptyBytes)
                    return sqlite3_bind_blob(statement, index, base, Int32(buffer.count), transientDestructor)
                }
            }
            guard status == SQLITE_OK else {
                throw error(status, String(cString: sqlite3_errmsg(handle)))
            }
        }
    }

    private func error(_ status: Int32, _ message: String) -> LedgerError {
        LedgerError(.storage, reason: "SQLite: \(message) (code \(status))", isRetryable: Self.isRetryable(status))
    }

    /// Whether a failed call may succeed later without anyone repairing the file: another
    /// writer's lock, and the file becoming writable again (disk full, read-only, I/O errors,
    /// a file size limit). Corruption and misuse are not retryable.
    static func isRetryable(_ status: Int32) -> Bool {
        [SQLITE_BUSY, SQLITE_LOCKED, SQLITE_FULL, SQLITE_IOERR, SQLITE_READONLY, SQLITE_CANTOPEN, SQLITE_PROTOCOL, SQLITE_PERM]
            .contains(status & 0xFF)
    }
}

/// `SQLITE_TRANSIENT`: SQLite copies bound values before the call returns.
private let transientDestructor = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

/// A non-null pointer for binding empty text or blobs.
/// Never written after initialization.
nonisolated(unsafe) private let emptyBytes: UnsafeMutablePointer<UInt8> = {
    let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: 1)
    pointer.initialize(to: 0)
    return pointer
}()

/// A value bound to a statement parameter.
package enum SQLiteValue {
    case null
    case integer(Int64)
    case text(String)
    case blob([UInt8])

    static func optional(_ text: String?) -> SQLiteValue { text.map { .text($0) } ?? .null }
    static func optional(_ number: Int64?) -> SQLiteValue { number.map { .integer($0) } ?? .null }
    static func optional(_ number: Int?) -> SQLiteValue { number.map { .integer(Int64($0)) } ?? .null }
    static func bool(_ value: Bool) -> SQLiteValue { .integer(value ? 1 : 0) }
}

/// SQLite's storage classes (`sqlite3_column_type`).
package enum SQLiteStorageClass: Sendable {
    case null, integer, real, text, blob
}

/// The current result row of a statement; valid only inside the row callback.
package struct SQLiteRow {
    let statement: OpaquePointer

    /// The storage class SQLite holds in `column` (its type affinity applied): what a reader
    /// that must not coerce (``SQLiteRow/integer(_:)`` reads text as 0) checks first.
    package func storageClass(_ column: Int32) -> SQLiteStorageClass {
        switch sqlite3_column_type(statement, column) {
        case SQLITE_NULL: .null
        case SQLITE_INTEGER: .integer
        case SQLITE_FLOAT: .real
        case SQLITE_TEXT: .text
        default: .blob
        }
    }

    /// The bytes of a text or blob in `column` as stored (text is not decoded: invalid UTF-8
    /// stays visible to the caller).
    package func bytes(_ column: Int32) -> [UInt8] {
        blob(column)
    }

    package func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(statement, column) == SQLITE_NULL
    }

    package func integer(_ column: Int32) -> Int64 {
        sqlite3_column_int64(statement, column)
    }

    package func optionalInteger(_ column: Int32) -> Int64? {
        isNull(column) ? nil : integer(column)
    }

    package func text(_ column: Int32) -> String {
        guard let pointer = sqlite3_column_text(statement, column) else { return "" }
        let count = Int(sqlite3_column_bytes(statement, column))
        return String(decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
    }

    package func optionalText(_ column: Int32) -> String? {
        isNull(column) ? nil : text(column)
    }

    package func blob(_ column: Int32) -> [UInt8] {
        // column_blob first, then column_bytes, as SQLite's documentation asks.
        let pointer = sqlite3_column_blob(statement, column)
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let pointer else { return [] }
        return Array(UnsafeRawBufferPointer(start: pointer, count: count))
    }

    package func optionalBlob(_ column: Int32) -> [UInt8]? {
        isNull(column) ? nil : blob(column)
    }
}

import StoreGateLedger

/// The console's timeline index (an account's events, newest first), filled behind the writes.
///
/// An index on the events table would cost each event one more page, at a random place in the
/// index, in the very commit that appends it: about a tenth of a purchase's commit. Instead the
/// writer thread copies the new events' `(account_id, sequence)` into `ledger_event_accounts`
/// in batches, in a transaction of their own, and `ledger_event_index.indexed_through` says how
/// far it got. A batch touches each index page once for all its events.
///
/// A timeline read is exact at any moment: it scans the events after `indexed_through` (at
/// most about one batch, the last ones appended) and takes the older ones from the index, both
/// in one read transaction. A process killed between a commit and the next batch leaves a
/// longer tail, which the next ledger to open the file indexes first.
enum SQLiteTimelineIndex {
    /// Events indexed per transaction, and how many may wait in the scanned tail before the
    /// writer indexes them.
    static let defaultBatch = 512

    /// Notes events appended on the writer's connection (a hint for ``isDue(_:batch:)``: an
    /// event of a job that rolled back is counted too, and merely makes a batch come early).
    static func appended(_ count: Int, _ connection: SQLiteConnection) {
        connection.eventsSinceIndexing += count
    }

    /// Whether enough events were appended on `connection` to index a batch.
    static func isDue(_ connection: SQLiteConnection, batch: Int) -> Bool {
        connection.eventsSinceIndexing >= batch
    }

    /// Indexes up to `batch` events after `indexed_through`, in the caller's write transaction,
    /// and returns how many sequences it passed (0 when everything is indexed).
    ///
    /// Reads the mark inside the transaction, so two processes sharing the file never index
    /// the same events twice; the batch goes into the index in key order.
    static func indexNext(_ connection: SQLiteConnection, batch: Int) throws(LedgerError) -> Int64 {
        var indexedThrough: Int64 = 0
        var newest: Int64 = 0
        try connection.query(
            "SELECT indexed_through, (SELECT COALESCE(MAX(sequence), 0) FROM ledger_events) FROM ledger_event_index WHERE singleton = 1"
        ) { row throws(LedgerError) in
            indexedThrough = row.integer(0)
            newest = row.integer(1)
        }
        let through = min(newest, indexedThrough + Int64(batch))
        guard through > indexedThrough else { return 0 }
        try connection.run(
            """
            INSERT OR IGNORE INTO ledger_event_accounts (account_id, sequence)
            SELECT account_id, sequence FROM ledger_events WHERE sequence > ?1 AND sequence <= ?2 ORDER BY account_id, sequence
            """,
            [.integer(indexedThrough), .integer(through)]
        )
        try connection.run("UPDATE ledger_event_index SET indexed_through = ? WHERE singleton = 1", [.integer(through)])
        return through - indexedThrough
    }

    /// Indexes what was noted since the last batch (at least a batch), in a transaction of its
    /// own, on the writer's connection between jobs: group commits that each appended more
    /// than the batch's worth do not leave a growing tail behind. A failure loses nothing: the
    /// events stay in the scanned tail for the next batch.
    static func indexBatch(_ connection: SQLiteConnection, batch: Int) {
        let noted = max(batch, connection.eventsSinceIndexing)
        do throws(LedgerError) {
            let indexed = try connection.transaction(immediate: true) { () throws(LedgerError) in try indexNext(connection, batch: noted) }
            connection.eventsSinceIndexing = indexed == 0 ? 0 : max(0, connection.eventsSinceIndexing - Int(indexed))
        } catch {
            // Kept for the next batch; reads stay exact, they scan a longer tail.
        }
    }

    /// Indexes everything not yet indexed (at open: what a killed process left).
    static func catchUp(_ connection: SQLiteConnection, batch: Int) throws(LedgerError) {
        while try connection.transaction(immediate: true, { () throws(LedgerError) in try indexNext(connection, batch: batch) }) > 0 {}
        connection.eventsSinceIndexing = 0
    }

    /// An account's events before `sequence` (all when `nil`), newest first, at most `limit`:
    /// the unindexed tail scanned, then the index. Run it in a read transaction.
    static func timeline(
        _ connection: SQLiteConnection, account: AccountID, before sequence: Int64?, limit: Int
    ) throws(LedgerError) -> [LedgerEvent] {
        var indexedThrough: Int64 = 0
        try connection.query("SELECT indexed_through FROM ledger_event_index WHERE singleton = 1") { row throws(LedgerError) in
            indexedThrough = row.integer(0)
        }
        let before = sequence ?? .max
        let id = SQLiteValue.text(account.rawValue)
        var events: [LedgerEvent] = []
        if before > indexedThrough + 1 {
            try connection.query(
                "SELECT sequence, payload FROM ledger_events WHERE sequence > ? AND sequence < ? AND account_id = ? ORDER BY sequence DESC LIMIT ?",
                [.integer(indexedThrough), .integer(before), id, .integer(Int64(limit))]
            ) { row throws(LedgerError) in
                events.append(try LedgerEvent(stored: row.blob(1), sequence: row.integer(0)))
            }
        }
        guard events.count < limit else { return events }
        try connection.query(
            """
            SELECT sequence, payload FROM ledger_events WHERE sequence IN
                (SELECT sequence FROM ledger_event_accounts WHERE account_id = ? AND sequence < ? ORDER BY sequence DESC LIMIT ?)
            ORDER BY sequence DESC
            """,
            [id, .integer(min(before, indexedThrough + 1)), .integer(Int64(limit - events.count))]
        ) { row throws(LedgerError) in
            events.append(try LedgerEvent(stored: row.blob(1), sequence: row.integer(0)))
        }
        return events
    }
}

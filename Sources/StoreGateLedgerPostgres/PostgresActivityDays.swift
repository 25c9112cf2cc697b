import StoreGateCore
import StoreGateLedger

/// The console overview's per-day counts (schema 15): `ledger_activity_days (day, kind, count)`,
/// as SQLite keeps them (`SQLiteActivityDays` describes the rows).
///
/// Row triggers keep the counts in the statement that changes a row, so in the same
/// transaction, on every write path at once: the apply function's inserts and updates of
/// transactions and events, bulk recording (the same function), transfers, the clock, and
/// retention's deletions (`ledger_prune_events`). The migration tool's `COPY` sets
/// `storegate.copying` to `on` for its transaction: it copies this table as the source holds it,
/// so the triggers stand aside while it copies the rows they would count.
///
/// Every writer of a day's counts changes one of today's few keys. From schema 16 a key's
/// count is spread over ``shards`` rows (`shard`: the writing server process's id modulo
/// their number), so concurrent writers, each on its own connection, rarely wait for one
/// another's row lock until commit, as they all did on one row per key before (measured by
/// `storegate-dev bench write-costs`); readers sum the shards. A deadlock between two plans
/// that touch the same rows in another order is retried like any other (40P01).
enum PostgresActivityDays {
    /// The rows a day's count of one kind is spread over (schema 16).
    static let shards = 16

    private static let sql = ActivityDayExpressions.postgres
    private static let countedTypes = ActivityDayExpressions.countedTypes

    /// Adds the (day, kind, change) rows `changes` selects (columns `d`, `k`, `n`), summed per
    /// day and kind (an upsert may meet a key once), in key order; sums of zero are not written.
    ///
    /// `sharded` (schema 16) adds them to this server process's shard.
    private static func add(_ changes: String, sharded: Bool = false) -> String {
        let (column, value) = sharded ? (", shard", ", (pg_backend_pid() % \(shards))::smallint") : ("", "")
        return """
            INSERT INTO ledger_activity_days (day, kind\(column), count)
                SELECT d, k\(value), SUM(n) FROM (\(changes)) c GROUP BY d, k HAVING SUM(n) <> 0 ORDER BY d, k
                ON CONFLICT (day, kind\(column)) DO UPDATE SET count = ledger_activity_days.count + excluded.count
            """
    }

    private static func activeChanges(_ row: String, sign: Int, from table: String? = nil) -> String {
        let from = table.map { " FROM \($0) \(row)" } ?? ""
        return """
            SELECT \(sql.firstDay(row)) AS d, 'active'::text AS k, \(sign)::bigint AS n\(from) WHERE \(sql.counted(row)) \
            UNION ALL SELECT \(sql.lastDay(row)), 'active', \(-sign)\(from) WHERE \(sql.counted(row))
            """
    }

    private static func eventChanges(_ row: String, sign: Int, from table: String? = nil) -> String {
        let from = table.map { " FROM \($0) \(row)" } ?? ""
        return "SELECT \(sql.day("\(row).recorded_at")) AS d, \(ActivityDayExpressions.kind("\(row).type")) AS k, \(sign)::bigint AS n\(from) WHERE \(row).type IN (\(countedTypes))"
    }

    private static let subscriptionColumns = ActivityDayExpressions.subscriptionColumns

    /// Outside the migration tool's copy (``PostgresActivityDays``).
    private static let maintained = "current_setting('storegate.copying', true) IS DISTINCT FROM 'on'"

    private static func function(_ name: String, _ body: String) -> String {
        """
        CREATE OR REPLACE FUNCTION \(name)() RETURNS trigger LANGUAGE plpgsql AS $fn$
        BEGIN
            \(body);
            RETURN NULL;
        END;
        $fn$
        """
    }

    /// Migration 15: the table, its fill from the stored events and transactions (what
    /// `activity` computed from them before), and the triggers that keep it.
    static let migration: [String] = [
        """
        CREATE TABLE ledger_activity_days (
            day BIGINT NOT NULL,
            kind TEXT NOT NULL,
            count BIGINT NOT NULL,
            PRIMARY KEY (day, kind)
        )
        """,
        add(eventChanges("e", sign: 1, from: "ledger_events") + " UNION ALL " + activeChanges("t", sign: 1, from: "ledger_transactions")),
    ] + functions(version: 1) + triggers(version: 1)

    /// Migration 16: the counts spread over ``shards`` rows per day and kind (the stored rows
    /// become shard 0), and the triggers moved to functions that write this process's shard.
    static let shardedMigration: [String] = [
        "ALTER TABLE ledger_activity_days ADD COLUMN shard SMALLINT NOT NULL DEFAULT 0",
        "ALTER TABLE ledger_activity_days DROP CONSTRAINT ledger_activity_days_pkey",
        "ALTER TABLE ledger_activity_days ADD PRIMARY KEY (day, kind, shard)",
    ] + functions(version: 2) + definitions.map { "DROP TRIGGER \($0.name) ON \($0.table)" } + triggers(version: 2)

    /// The triggers that keep the counts: each one's name (its function's too, with a version
    /// suffix), table, row change, condition, and the (day, kind, change) rows it adds.
    private static let definitions: [(name: String, table: String, change: String, condition: String, counts: String)] = [
        ("ledger_activity_event_inserted", "ledger_events", "INSERT", "NEW.type IN (\(countedTypes))", eventChanges("NEW", sign: 1)),
        ("ledger_activity_event_deleted", "ledger_events", "DELETE", "OLD.type IN (\(countedTypes))", eventChanges("OLD", sign: -1)),
        ("ledger_activity_transaction_inserted", "ledger_transactions", "INSERT", sql.counted("NEW"), activeChanges("NEW", sign: 1)),
        (
            "ledger_activity_transaction_updated", "ledger_transactions", "UPDATE OF \(subscriptionColumns.joined(separator: ", "))",
            "(\(subscriptionColumns.map { "OLD.\($0) IS DISTINCT FROM NEW.\($0)" }.joined(separator: " OR ")))",
            activeChanges("OLD", sign: -1) + " UNION ALL " + activeChanges("NEW", sign: 1)
        ),
        ("ledger_activity_transaction_deleted", "ledger_transactions", "DELETE", sql.counted("OLD"), activeChanges("OLD", sign: -1)),
    ]

    /// The trigger functions of `version` (`_v1`; `_v2` writes this process's shard).
    private static func functions(version: Int) -> [String] {
        definitions.map { function("\($0.name)_v\(version)", add($0.counts, sharded: version >= 2)) }
    }

    /// The triggers, calling the functions of `version`.
    private static func triggers(version: Int) -> [String] {
        definitions.map {
            """
            CREATE TRIGGER \($0.name) AFTER \($0.change) ON \($0.table) FOR EACH ROW
            WHEN (\($0.condition) AND \(maintained)) EXECUTE FUNCTION \($0.name)_v\(version)()
            """
        }
    }
}

/// The overview's window: the sum of the `active` changes before its first day (`$1`), as a
/// row on the day before it, then the window's rows.
/// (From schema 16 a day and kind may have a row per shard: the reader adds them up.)
enum ActivityDaysSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_activity_days_v15"
    static let sql = """
        SELECT $1::bigint - 1, 'active'::text, COALESCE(SUM(count), 0)::bigint FROM ledger_activity_days
        WHERE day < $1::bigint AND kind = 'active'
        UNION ALL
        SELECT day, kind, count FROM ledger_activity_days WHERE day >= $1::bigint AND day < $2::bigint
        """
}

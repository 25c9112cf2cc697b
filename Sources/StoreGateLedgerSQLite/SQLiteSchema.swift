import StoreGateLedger

/// The ledger's SQLite schema, as versioned migrations applied in order at start-up.
///
/// Dates are milliseconds since 1970 (`INTEGER`); booleans are 0/1. A migration, once
/// released, never changes: later changes are new versions.
enum SQLiteSchema {
    struct Migration {
        let version: Int
        let description: String
        let statements: [String]
    }

    static let migrations: [Migration] = [
        Migration(version: 1, description: "families, transactions, renewals, notifications, proofs, balances, consumptions", statements: [
            """
            CREATE TABLE ledger_families (
                environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                account_id TEXT,
                PRIMARY KEY (environment, original_transaction_id)
            ) WITHOUT ROWID
            """,
            "CREATE INDEX ledger_families_account ON ledger_families (account_id)",
            """
            CREATE TABLE ledger_transactions (
                environment TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                account_id TEXT,
                bundle_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                product_type TEXT NOT NULL,
                has_apple_metadata INTEGER NOT NULL,
                subscription_group TEXT NOT NULL,
                quantity INTEGER NOT NULL CHECK (quantity > 0),
                purchase_date INTEGER NOT NULL,
                original_purchase_date INTEGER,
                expires_date INTEGER,
                revocation_date INTEGER,
                revocation_reason INTEGER,
                is_upgraded INTEGER NOT NULL,
                web_order_line_item_id TEXT,
                app_account_token TEXT,
                observed_at INTEGER NOT NULL,
                source TEXT NOT NULL,
                proof_digest BLOB,
                recorded_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                UNIQUE (environment, transaction_id)
            )
            """,
            "CREATE INDEX ledger_transactions_account ON ledger_transactions (account_id)",
            "CREATE INDEX ledger_transactions_family ON ledger_transactions (environment, original_transaction_id)",
            """
            CREATE TABLE ledger_renewals (
                environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                auto_renew_product_id TEXT,
                will_auto_renew INTEGER NOT NULL,
                expiration_intent INTEGER,
                is_in_billing_retry_period INTEGER NOT NULL,
                grace_period_expires_date INTEGER,
                renewal_date INTEGER,
                observed_at INTEGER NOT NULL,
                tiebreak TEXT NOT NULL,
                PRIMARY KEY (environment, original_transaction_id)
            ) WITHOUT ROWID
            """,
            """
            CREATE TABLE ledger_notifications (
                notification_uuid TEXT NOT NULL PRIMARY KEY,
                environment TEXT NOT NULL,
                notification_type TEXT NOT NULL,
                subtype TEXT,
                signed_date INTEGER NOT NULL,
                transaction_id TEXT,
                original_transaction_id TEXT,
                proof_digest BLOB NOT NULL,
                received_at INTEGER NOT NULL
            ) WITHOUT ROWID
            """,
            "CREATE INDEX ledger_notifications_family ON ledger_notifications (environment, original_transaction_id)",
            """
            CREATE TABLE ledger_proofs (
                digest BLOB NOT NULL UNIQUE CHECK (length(digest) = 32),
                kind TEXT NOT NULL,
                environment TEXT NOT NULL,
                key_id TEXT,
                sealed BLOB,
                received_at INTEGER NOT NULL,
                CHECK ((key_id IS NULL) = (sealed IS NULL))
            )
            """,
            """
            CREATE TABLE ledger_balances (
                account_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                purchased INTEGER NOT NULL CHECK (purchased >= 0),
                refunded INTEGER NOT NULL CHECK (refunded >= 0),
                consumed INTEGER NOT NULL CHECK (consumed >= 0),
                PRIMARY KEY (account_id, product_id)
            ) WITHOUT ROWID
            """,
            """
            CREATE TABLE ledger_consumptions (
                account_id TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                product_id TEXT NOT NULL,
                quantity INTEGER NOT NULL CHECK (quantity > 0),
                consumed_at INTEGER NOT NULL,
                remaining INTEGER NOT NULL,
                PRIMARY KEY (account_id, idempotency_key)
            ) WITHOUT ROWID
            """,
        ]),
        Migration(version: 2, description: "the events outbox", statements: [
            // `sequence` is the rowid (migration 7 drops AUTOINCREMENT).
            """
            CREATE TABLE ledger_events (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL,
                account_id TEXT NOT NULL,
                type TEXT NOT NULL,
                recorded_at INTEGER NOT NULL,
                payload BLOB NOT NULL
            )
            """,
        ]),
        Migration(version: 3, description: "webhook deliveries", statements: [
            """
            CREATE TABLE ledger_webhook_cursors (
                endpoint TEXT NOT NULL PRIMARY KEY,
                sequence INTEGER NOT NULL
            ) WITHOUT ROWID
            """,
            """
            CREATE TABLE ledger_deliveries (
                endpoint TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                event_id TEXT NOT NULL,
                event_type TEXT NOT NULL,
                account_id TEXT NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed')),
                attempts INTEGER NOT NULL,
                first_attempt_at INTEGER,
                next_attempt_at INTEGER,
                claimed_by TEXT,
                claimed_until INTEGER,
                last_status INTEGER,
                last_error TEXT,
                delivered_at INTEGER,
                PRIMARY KEY (endpoint, sequence)
            ) WITHOUT ROWID
            """,
            "CREATE INDEX ledger_deliveries_pending ON ledger_deliveries (endpoint, sequence) WHERE status = 'pending'",
            "CREATE INDEX ledger_deliveries_account ON ledger_deliveries (endpoint, account_id, sequence) WHERE status = 'pending'",
            "CREATE INDEX ledger_deliveries_status ON ledger_deliveries (status, sequence)",
        ]),
        Migration(version: 4, description: "the console's lookups", statements: [
            // An account's timeline, newest first; searches by app account token and web
            // order line item id (transaction and original transaction ids use the unique and
            // family indexes, one probe per environment). The overview finds its days by
            // bisecting sequences: an index on recording times would cost every write.
            "CREATE INDEX ledger_events_account ON ledger_events (account_id, sequence)",
            "CREATE INDEX ledger_transactions_token ON ledger_transactions (app_account_token) WHERE app_account_token IS NOT NULL",
            "CREATE INDEX ledger_transactions_web_order ON ledger_transactions (web_order_line_item_id) WHERE web_order_line_item_id IS NOT NULL",
        ]),
        Migration(version: 5, description: "leased states (the App Store sync's cursors)", statements: [
            """
            CREATE TABLE ledger_leased_states (
                name TEXT NOT NULL PRIMARY KEY,
                value TEXT,
                holder TEXT,
                lease_until INTEGER,
                updated_at INTEGER
            ) WITHOUT ROWID
            """,
        ]),
        Migration(version: 6, description: "time-driven subscription transitions", statements: [
            "ALTER TABLE ledger_families ADD COLUMN next_transition_at INTEGER",
            "CREATE INDEX ledger_families_next_transition ON ledger_families (next_transition_at) WHERE next_transition_at IS NOT NULL",
        ] + SQLiteSchema.nextTransitionBackfill),
        Migration(version: 7, description: "fewer pages per commit: transactions kept by family, events numbered without AUTOINCREMENT, the timeline indexed behind the writes", statements: [
            // Every page a commit changes is one more frame written to the WAL and copied back
            // by the checkpoint, and a purchase changed one page in each of the transactions'
            // table and its three indexes. Kept in a table ordered by family (the key every
            // write and every account read looks them up by), the transactions need one index
            // (their unique key) instead of three: the family index is the table itself, and
            // the account index goes, since a transaction's account is always its family's (the
            // integrity check counts any mismatch) and an account's transactions are found
            // through the families' account index.
            """
            CREATE TABLE ledger_transactions_by_family (
                environment TEXT NOT NULL,
                transaction_id TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                account_id TEXT,
                bundle_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                product_type TEXT NOT NULL,
                has_apple_metadata INTEGER NOT NULL,
                subscription_group TEXT NOT NULL,
                quantity INTEGER NOT NULL CHECK (quantity > 0),
                purchase_date INTEGER NOT NULL,
                original_purchase_date INTEGER,
                expires_date INTEGER,
                revocation_date INTEGER,
                revocation_reason INTEGER,
                is_upgraded INTEGER NOT NULL,
                web_order_line_item_id TEXT,
                app_account_token TEXT,
                observed_at INTEGER NOT NULL,
                source TEXT NOT NULL,
                proof_digest BLOB,
                recorded_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL,
                PRIMARY KEY (environment, original_transaction_id, transaction_id)
            ) WITHOUT ROWID
            """,
            """
            INSERT INTO ledger_transactions_by_family (\(SQLiteSchema.transactionCopyColumns))
                SELECT \(SQLiteSchema.transactionCopyColumns) FROM ledger_transactions
            """,
            "DROP TABLE ledger_transactions",
            "ALTER TABLE ledger_transactions_by_family RENAME TO ledger_transactions",
            "CREATE UNIQUE INDEX ledger_transactions_key ON ledger_transactions (environment, transaction_id)",
            "CREATE INDEX ledger_transactions_token ON ledger_transactions (app_account_token) WHERE app_account_token IS NOT NULL",
            "CREATE INDEX ledger_transactions_web_order ON ledger_transactions (web_order_line_item_id) WHERE web_order_line_item_id IS NOT NULL",
            // AUTOINCREMENT rewrote `sqlite_sequence` (one more page in the WAL) on every commit
            // that appended an event. A plain rowid is the largest stored plus one, so it never
            // goes back while the newest event stays, which a trigger guarantees. The copy keeps
            // every sequence, and refuses a file whose newest events were deleted by hand (the
            // next ones would reuse sequences that cursors already passed).
            "CREATE TEMP TABLE storegate_migration_7 (consistent INTEGER NOT NULL)",
            """
            CREATE TEMP TRIGGER storegate_migration_7_guard BEFORE INSERT ON storegate_migration_7 WHEN NOT NEW.consistent
            BEGIN SELECT RAISE(ABORT, 'events after the newest stored were deleted; their sequences would be reused'); END
            """,
            """
            INSERT INTO storegate_migration_7 SELECT
                (SELECT COALESCE(MAX(seq), 0) FROM sqlite_sequence WHERE name = 'ledger_events')
                    <= (SELECT COALESCE(MAX(sequence), 0) FROM ledger_events)
            """,
            "DROP TABLE storegate_migration_7",
            """
            CREATE TABLE ledger_events_numbered (
                sequence INTEGER PRIMARY KEY,
                id TEXT NOT NULL,
                account_id TEXT NOT NULL,
                type TEXT NOT NULL,
                recorded_at INTEGER NOT NULL,
                payload BLOB NOT NULL
            )
            """,
            """
            INSERT INTO ledger_events_numbered (sequence, id, account_id, type, recorded_at, payload)
                SELECT sequence, id, account_id, type, recorded_at, payload FROM ledger_events ORDER BY sequence
            """,
            "DROP TABLE ledger_events",
            "ALTER TABLE ledger_events_numbered RENAME TO ledger_events",
            // The console's timeline index, filled behind the writes (``SQLiteTimelineIndex``):
            // an index on the events table cost every event one page at a random place in it,
            // in the commit that appended it. Everything stored so far is indexed here.
            """
            CREATE TABLE ledger_event_accounts (
                account_id TEXT NOT NULL,
                sequence INTEGER NOT NULL,
                PRIMARY KEY (account_id, sequence)
            ) WITHOUT ROWID
            """,
            """
            CREATE TABLE ledger_event_index (
                singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
                indexed_through INTEGER NOT NULL
            )
            """,
            "INSERT INTO ledger_event_accounts (account_id, sequence) SELECT account_id, sequence FROM ledger_events ORDER BY account_id, sequence",
            "INSERT INTO ledger_event_index (singleton, indexed_through) SELECT 1, COALESCE(MAX(sequence), 0) FROM ledger_events",
            """
            CREATE TRIGGER ledger_events_keep_newest BEFORE DELETE ON ledger_events
            WHEN OLD.sequence = (SELECT MAX(sequence) FROM ledger_events)
            BEGIN SELECT RAISE(ABORT, 'the newest event is never deleted: the next one would reuse its sequence'); END
            """,
        ]),
        Migration(version: 8, description: "event retention: how far the oldest events were deleted", statements: [
            "ALTER TABLE ledger_event_index ADD COLUMN pruned_through INTEGER NOT NULL DEFAULT 0",
        ]),
        Migration(version: 9, description: "entitlement grants", statements: [
            """
            CREATE TABLE ledger_grants (
                id TEXT PRIMARY KEY,
                account_id TEXT NOT NULL,
                entitlement TEXT NOT NULL,
                starts_at INTEGER NOT NULL,
                expires_at INTEGER NOT NULL,
                reason TEXT NOT NULL,
                granted_by TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                request_digest TEXT NOT NULL,
                revoked_at INTEGER,
                revoked_by TEXT,
                revocation_reason TEXT,
                expiry_emitted INTEGER NOT NULL DEFAULT 0,
                UNIQUE (account_id, idempotency_key)
            )
            """,
            // The clock's look-up of the grants that reached their end and were not announced.
            "CREATE INDEX ledger_grants_due ON ledger_grants (expires_at) WHERE expiry_emitted = 0 AND revoked_at IS NULL",
        ]),
        Migration(version: 11, description: "entitlement snapshots (what entitlement.changed last announced)", statements: [
            "CREATE TABLE ledger_entitlement_snapshots (account_id TEXT PRIMARY KEY, snapshot TEXT NOT NULL, next_check_at INTEGER) WITHOUT ROWID",
            "CREATE INDEX ledger_entitlement_snapshots_due ON ledger_entitlement_snapshots (next_check_at) WHERE next_check_at IS NOT NULL",
        ]),
        Migration(version: 12, description: "purchase transfers between accounts", statements: [
            // One row per move of a family: the audit (who, why, from where) and the consumed
            // units of the old owner that went with a consumable, which the integrity check adds
            // to the consumptions behind each balance. The owner itself is the family's row.
            """
            CREATE TABLE ledger_transfers (
                id TEXT PRIMARY KEY,
                environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                from_account TEXT NOT NULL,
                to_account TEXT NOT NULL,
                transferred_at INTEGER NOT NULL,
                source TEXT NOT NULL,
                actor TEXT,
                reason TEXT,
                product_id TEXT,
                units INTEGER NOT NULL CHECK (units >= 0),
                refunded_units INTEGER NOT NULL CHECK (refunded_units >= 0),
                consumed_moved INTEGER NOT NULL CHECK (consumed_moved >= 0 AND consumed_moved <= units)
            ) WITHOUT ROWID
            """,
        ]),
        Migration(version: 13, description: "webhook endpoints and API keys managed live", statements: [
            """
            CREATE TABLE ledger_webhook_endpoints (
                name TEXT NOT NULL PRIMARY KEY,
                url TEXT NOT NULL,
                secrets TEXT NOT NULL,
                types TEXT,
                paused INTEGER NOT NULL,
                source TEXT NOT NULL,
                revision INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                updated_at INTEGER NOT NULL
            ) WITHOUT ROWID
            """,
            // Looked up by digest on every request that presents a key not configured by file or environment.
            """
            CREATE TABLE ledger_api_keys (
                name TEXT NOT NULL PRIMARY KEY,
                digest BLOB NOT NULL UNIQUE,
                permissions TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                created_by TEXT NOT NULL,
                expires_at INTEGER,
                revoked_at INTEGER,
                last_used_at INTEGER,
                rate_requests INTEGER,
                rate_seconds INTEGER
            ) WITHOUT ROWID
            """,
        ]),
        Migration(version: 14, description: "money facts: price, currency, storefront, offer and transaction reason of each transaction", statements: [
            // `money_known` 0: only an app receipt showed the transaction (no price: unknown).
            // Rows stored before this version get theirs from their stored proofs
            // (`MoneyFactsBackfill`) or from Apple's history.
            "ALTER TABLE ledger_transactions ADD COLUMN money_known INTEGER NOT NULL DEFAULT 0",
            "ALTER TABLE ledger_transactions ADD COLUMN price INTEGER",
            "ALTER TABLE ledger_transactions ADD COLUMN currency TEXT",
            "ALTER TABLE ledger_transactions ADD COLUMN storefront TEXT",
            "ALTER TABLE ledger_transactions ADD COLUMN offer_type INTEGER",
            "ALTER TABLE ledger_transactions ADD COLUMN offer_identifier TEXT",
            "ALTER TABLE ledger_transactions ADD COLUMN offer_period TEXT",
            "ALTER TABLE ledger_transactions ADD COLUMN offer_discount_type TEXT",
            "ALTER TABLE ledger_transactions ADD COLUMN transaction_reason TEXT",
            // The daily analytics rollups, moved with every change of a family (FamilyRollup).
            """
            CREATE TABLE ledger_rollups (
                measure TEXT NOT NULL,
                environment TEXT NOT NULL,
                day INTEGER NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                currency TEXT NOT NULL,
                offer TEXT NOT NULL,
                count INTEGER NOT NULL,
                amount INTEGER NOT NULL,
                PRIMARY KEY (measure, environment, day, product_id, subscription_group, storefront, currency, offer)
            ) WITHOUT ROWID
            """,
            // A ledger with transactions gets its rollups computed when it is next opened.
            "CREATE TABLE ledger_analytics_state (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), needs_rebuild INTEGER NOT NULL, rebuilt_at INTEGER)",
            "INSERT INTO ledger_analytics_state (singleton, needs_rebuild) SELECT 1, EXISTS (SELECT 1 FROM ledger_transactions)",
        ]),
        Migration(
            version: 15, description: "the console overview's activity counted per day, kept by triggers",
            statements: SQLiteActivityDays.migration
        ),
        // PostgreSQL's 16 spreads the per-day counts over rows its concurrent writers do not
        // share; SQLite has one writer at a time, so the version is kept in step with nothing to do.
        Migration(version: 16, description: "the overview's per-day counts as they were (PostgreSQL spreads them over shards; one SQLite writer needs none)", statements: []),
        Migration(version: 17, description: "rollup changes queued by each write and folded into the rollups in batches", statements: [
            // One row per write that moved a rollup (RollupChanges): appended at the end of
            // the rowid order, deleted by the fold that adds it to ledger_rollups.
            "CREATE TABLE ledger_rollup_changes (sequence INTEGER PRIMARY KEY, deltas BLOB NOT NULL)",
        ]),
        Migration(version: 18, description: "the rollups summed per measure, day and currency, for reads that keep no other dimension", statements: [
            // What a read summing over every dimension but the currency needs (the console's
            // overview, a metric not grouped): one row per day, however many products,
            // storefronts and offers the rollups hold that day (issue 31: the overview's gauges
            // sum every day since the first).
            """
            CREATE TABLE ledger_rollup_days (
                measure TEXT NOT NULL,
                environment TEXT NOT NULL,
                day INTEGER NOT NULL,
                currency TEXT NOT NULL,
                count INTEGER NOT NULL,
                amount INTEGER NOT NULL,
                PRIMARY KEY (measure, environment, day, currency)
            ) WITHOUT ROWID
            """,
            // From the rollups as stored; changes still queued reach both tables when folded.
            """
            INSERT INTO ledger_rollup_days (measure, environment, day, currency, count, amount)
            SELECT measure, environment, day, currency, SUM(count), SUM(amount) FROM ledger_rollups
            GROUP BY measure, environment, day, currency
            """,
        ]),
    ]

    /// Every column of `ledger_transactions` at version 7, for that migration's copy. Frozen, as
    /// migrations are: not built from ``SQLiteLedger/transactionColumns``, which later versions
    /// may extend.
    static let transactionCopyColumns = """
        environment, transaction_id, original_transaction_id, account_id, bundle_id, product_id, product_type, \
        has_apple_metadata, subscription_group, quantity, purchase_date, original_purchase_date, expires_date, \
        revocation_date, revocation_reason, is_upgraded, web_order_line_item_id, app_account_token, observed_at, \
        source, proof_digest, recorded_at, updated_at
        """

    /// Sets the owned families' next transition from the rows stored before migration 6: the
    /// earliest expiry or grace period end still ahead (any product: a moment where nothing
    /// changes is examined once and passed).
    static let nextTransitionBackfill: [String] = {
        let now = "CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)"
        let sameFamily = "environment = ledger_families.environment AND original_transaction_id = ledger_families.original_transaction_id"
        return [
            """
            UPDATE ledger_families SET next_transition_at =
                (SELECT MIN(expires_date) FROM ledger_transactions WHERE \(sameFamily) AND expires_date > \(now))
            WHERE account_id IS NOT NULL
            """,
            """
            UPDATE ledger_families SET next_transition_at =
                (SELECT grace_period_expires_date FROM ledger_renewals WHERE \(sameFamily))
            WHERE account_id IS NOT NULL AND EXISTS (
                SELECT 1 FROM ledger_renewals WHERE \(sameFamily) AND grace_period_expires_date > \(now)
                  AND (ledger_families.next_transition_at IS NULL OR grace_period_expires_date < ledger_families.next_transition_at))
            """,
        ]
    }()

    /// Applies the missing migrations in one `BEGIN IMMEDIATE` transaction, so processes
    /// opening the same file at once apply each exactly once.
    ///
    /// - Throws: ``LedgerError/Code/schemaTooNew`` when the file was migrated by a newer
    ///   StoreGate; ``LedgerError/Code/migration`` when a migration fails.
    ///
    /// Every known migration the file has not recorded is applied, in order — not only those
    /// above the highest recorded: a version merged after a higher one (live admin's 13 after
    /// money facts' 14) still reaches a file already at the higher one. Such a migration must
    /// not depend on the higher ones being absent.
    ///
    /// - Parameters:
    ///   - version: the last migration to apply (tests build older files); all by default.
    ///   - known: the migrations this StoreGate knows (tests add one).
    static func migrate(
        _ connection: SQLiteConnection, now: Int64, through version: Int? = nil, known: [Migration] = migrations
    ) throws(LedgerError) {
        try connection.transaction(immediate: true) { () throws(LedgerError) in
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS ledger_migrations (
                    version INTEGER PRIMARY KEY,
                    description TEXT NOT NULL,
                    applied_at INTEGER NOT NULL
                )
                """)
            var applied: Set<Int64> = []
            try connection.query("SELECT version FROM ledger_migrations") { row throws(LedgerError) in
                applied.insert(row.integer(0))
            }
            let current = applied.max() ?? 0
            let latest = known.last?.version ?? 0
            guard current <= latest else {
                throw LedgerError(.schemaTooNew, reason: "the database has schema version \(current); this StoreGate knows up to \(latest)")
            }
            for migration in known where !applied.contains(Int64(migration.version)) && migration.version <= (version ?? latest) {
                do throws(LedgerError) {
                    for statement in migration.statements { try connection.execute(statement) }
                } catch {
                    throw LedgerError(.migration, reason: "migration \(migration.version) failed: \(error.reason)")
                }
                try connection.run(
                    "INSERT INTO ledger_migrations (version, description, applied_at) VALUES (?, ?, ?)",
                    [.integer(Int64(migration.version)), .text(migration.description), .integer(now)]
                )
            }
        }
    }
}

extension SQLiteLedger {
    /// The schema versions this StoreGate's SQLite ledger applies (10 was never used): a file
    /// is current when `ledger_migrations` records exactly these.
    package static var schemaVersions: [Int] { SQLiteSchema.migrations.map(\.version) }
}

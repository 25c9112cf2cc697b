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
            // `sequence` is the rowid: AUTOINCREMENT never reuses one, even after a delete.
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
    ]

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
    static func migrate(_ connection: SQLiteConnection, now: Int64) throws(LedgerError) {
        try connection.transaction(immediate: true) { () throws(LedgerError) in
            try connection.execute("""
                CREATE TABLE IF NOT EXISTS ledger_migrations (
                    version INTEGER PRIMARY KEY,
                    description TEXT NOT NULL,
                    applied_at INTEGER NOT NULL
                )
                """)
            var current: Int64 = 0
            try connection.query("SELECT COALESCE(MAX(version), 0) FROM ledger_migrations") { row throws(LedgerError) in
                current = row.integer(0)
            }
            let latest = migrations.last?.version ?? 0
            guard current <= latest else {
                throw LedgerError(.schemaTooNew, reason: "the database has schema version \(current); this StoreGate knows up to \(latest)")
            }
            for migration in migrations where migration.version > current {
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

import Logging
import PostgresNIO
import StoreGateLedger

/// The ledger's PostgreSQL schema, as versioned migrations applied at start-up.
///
/// Migrations run in one transaction holding a transaction-scoped advisory lock, so service
/// instances starting at once apply each migration exactly once; DDL in PostgreSQL is
/// transactional, so a failed migration leaves nothing behind. Dates are milliseconds since
/// 1970 (`BIGINT`).
///
/// Keys lead with the identifier, not the environment, and "no owner" is tested as
/// `COALESCE(account_id, '') = ''`: each lookup then matches exactly one index, so the plans
/// the functions cache (``PostgresFunctions``) stay index probes whatever the statistics
/// were when they were made.
enum PostgresSchema {
    /// The advisory lock key migrations hold ("sgledger" in ASCII).
    static let migrationLock: Int64 = 0x7367_6C65_6467_6572

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
                PRIMARY KEY (original_transaction_id, environment)
            )
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
                has_apple_metadata BOOLEAN NOT NULL,
                subscription_group TEXT NOT NULL,
                quantity BIGINT NOT NULL CHECK (quantity > 0),
                purchase_date BIGINT NOT NULL,
                original_purchase_date BIGINT,
                expires_date BIGINT,
                revocation_date BIGINT,
                revocation_reason BIGINT,
                is_upgraded BOOLEAN NOT NULL,
                web_order_line_item_id TEXT,
                app_account_token TEXT,
                observed_at BIGINT NOT NULL,
                source TEXT NOT NULL,
                proof_digest BYTEA,
                revision BIGINT NOT NULL DEFAULT 0,
                recorded_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL,
                PRIMARY KEY (transaction_id, environment)
            )
            """,
            "CREATE INDEX ledger_transactions_account ON ledger_transactions (account_id)",
            "CREATE INDEX ledger_transactions_family ON ledger_transactions (original_transaction_id, environment)",
            """
            CREATE TABLE ledger_renewals (
                environment TEXT NOT NULL,
                original_transaction_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                auto_renew_product_id TEXT,
                will_auto_renew BOOLEAN NOT NULL,
                expiration_intent BIGINT,
                is_in_billing_retry_period BOOLEAN NOT NULL,
                grace_period_expires_date BIGINT,
                renewal_date BIGINT,
                observed_at BIGINT NOT NULL,
                tiebreak TEXT NOT NULL,
                PRIMARY KEY (original_transaction_id, environment)
            )
            """,
            """
            CREATE TABLE ledger_notifications (
                notification_uuid TEXT PRIMARY KEY,
                environment TEXT NOT NULL,
                notification_type TEXT NOT NULL,
                subtype TEXT,
                signed_date BIGINT NOT NULL,
                transaction_id TEXT,
                original_transaction_id TEXT,
                proof_digest BYTEA NOT NULL,
                received_at BIGINT NOT NULL
            )
            """,
            "CREATE INDEX ledger_notifications_family ON ledger_notifications (original_transaction_id, environment)",
            """
            CREATE TABLE ledger_proofs (
                digest BYTEA PRIMARY KEY CHECK (length(digest) = 32),
                kind TEXT NOT NULL,
                environment TEXT NOT NULL,
                key_id TEXT,
                sealed BYTEA,
                received_at BIGINT NOT NULL,
                CHECK ((key_id IS NULL) = (sealed IS NULL))
            )
            """,
            """
            CREATE TABLE ledger_balances (
                account_id TEXT NOT NULL,
                product_id TEXT NOT NULL,
                purchased BIGINT NOT NULL CHECK (purchased >= 0),
                refunded BIGINT NOT NULL CHECK (refunded >= 0),
                consumed BIGINT NOT NULL CHECK (consumed >= 0),
                PRIMARY KEY (account_id, product_id)
            )
            """,
            """
            CREATE TABLE ledger_consumptions (
                account_id TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                product_id TEXT NOT NULL,
                quantity BIGINT NOT NULL CHECK (quantity > 0),
                consumed_at BIGINT NOT NULL,
                remaining BIGINT NOT NULL,
                PRIMARY KEY (account_id, idempotency_key)
            )
            """,
            // Sealed proofs are random bytes: never try to compress them.
            "ALTER TABLE ledger_proofs ALTER COLUMN sealed SET STORAGE EXTERNAL",
            PostgresFunctions.load,
            PostgresFunctions.account,
            PostgresFunctions.consume,
            PostgresFunctions.apply,
        ]),
        Migration(version: 2, description: "the events outbox; family revisions", statements: PostgresEvents.migration),
        Migration(version: 3, description: "webhook deliveries", statements: PostgresDeliveries.migration),
        Migration(version: 4, description: "the console's lookups", statements: [
            // An account's timeline, newest first; the overview's days; searches by app
            // account token and web order line item id (transaction and original transaction
            // ids use the unique and family indexes).
            // Numbered events only: the sequencer's update adds the entry, the insert none.
            "CREATE INDEX ledger_events_account ON ledger_events (account_id, sequence) WHERE sequence IS NOT NULL",
            "CREATE INDEX ledger_events_recorded ON ledger_events (recorded_at)",
            "CREATE INDEX ledger_transactions_token ON ledger_transactions (app_account_token) WHERE app_account_token IS NOT NULL",
            "CREATE INDEX ledger_transactions_web_order ON ledger_transactions (web_order_line_item_id) WHERE web_order_line_item_id IS NOT NULL",
        ]),
        Migration(version: 5, description: "leased states (the App Store sync's cursors)", statements: [
            """
            CREATE TABLE ledger_leased_states (
                name TEXT NOT NULL PRIMARY KEY,
                value TEXT,
                holder TEXT,
                lease_until BIGINT,
                updated_at BIGINT
            )
            """,
        ]),
        Migration(version: 6, description: "time-driven subscription transitions", statements: [
            "ALTER TABLE ledger_families ADD COLUMN next_transition_at BIGINT",
            "CREATE INDEX ledger_families_next_transition ON ledger_families (next_transition_at) WHERE next_transition_at IS NOT NULL",
        ] + nextTransitionBackfill + [PostgresEvents.load, PostgresFunctions.applyWithEvents]),
        Migration(version: 7, description: "cheaper recording: only numbered events in the sequence index, recording times in a BRIN index, ledger_apply_v3 runs only the lists a plan has; the stream read along its index", statements: [
            // An appended event went into four B-tree indexes before it was numbered. A unique
            // index on `sequence` held an entry for every unnumbered (NULL) one: now it holds
            // numbered events only (every read of the stream asks for a range of sequences,
            // which implies NOT NULL). Recording times follow the table's physical order, so a
            // block-range index answers the overview's day ranges at almost no cost per insert.
            "ALTER TABLE ledger_events DROP CONSTRAINT ledger_events_sequence_key",
            "CREATE UNIQUE INDEX ledger_events_sequence ON ledger_events (sequence) WHERE sequence IS NOT NULL",
            "DROP INDEX ledger_events_recorded",
            "CREATE INDEX ledger_events_recorded ON ledger_events USING brin (recorded_at) WITH (autosummarize = on)",
            PostgresFunctions.applyLean,
            PostgresEvents.eventsAfter,
        ]),
        Migration(version: 8, description: "cheaper recording: events beside the plan as text, proofs stored in their row; event retention", statements: [
            // A sealed proof of 2 KB or more was moved out of its row into the TOAST table
            // (two chunks and two index entries each); a row up to a page keeps it: 2.8 µs less
            // per purchase, and a proof is read in one place. Applies to rows written from now on.
            "ALTER TABLE ledger_proofs SET (toast_tuple_target = 8160)",
            PostgresFunctions.applyWithEventArrays,
            // Retention deletes the oldest events; a cursor below them has expired.
            "ALTER TABLE ledger_event_head ADD COLUMN pruned_through BIGINT NOT NULL DEFAULT 0",
            PostgresEvents.eventsAfterWithRetention,
            PostgresEvents.prune,
        ]),
        Migration(version: 9, description: "entitlement grants", statements: [
            """
            CREATE TABLE ledger_grants (
                id TEXT PRIMARY KEY,
                account_id TEXT NOT NULL,
                entitlement TEXT NOT NULL,
                starts_at BIGINT NOT NULL,
                expires_at BIGINT NOT NULL,
                reason TEXT NOT NULL,
                granted_by TEXT NOT NULL,
                idempotency_key TEXT NOT NULL,
                request_digest TEXT NOT NULL,
                revoked_at BIGINT,
                revoked_by TEXT,
                revocation_reason TEXT,
                expiry_emitted BOOLEAN NOT NULL DEFAULT false,
                UNIQUE (account_id, idempotency_key)
            )
            """,
            "CREATE INDEX ledger_grants_account ON ledger_grants (account_id, starts_at)",
            "CREATE INDEX ledger_grants_due ON ledger_grants (expires_at) WHERE NOT expiry_emitted AND revoked_at IS NULL",
        ]),
        Migration(version: 11, description: "entitlement snapshots (what entitlement.changed last announced)", statements: [
            "CREATE TABLE ledger_entitlement_snapshots (account_id TEXT PRIMARY KEY, snapshot TEXT NOT NULL, next_check_at BIGINT)",
            "CREATE INDEX ledger_entitlement_snapshots_due ON ledger_entitlement_snapshots (next_check_at) WHERE next_check_at IS NOT NULL",
        ]),
        Migration(version: 12, description: "purchase transfers between accounts; ledger_apply_v5 moves families", statements: [
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
                transferred_at BIGINT NOT NULL,
                source TEXT NOT NULL,
                actor TEXT,
                reason TEXT,
                product_id TEXT,
                units BIGINT NOT NULL CHECK (units >= 0),
                refunded_units BIGINT NOT NULL CHECK (refunded_units >= 0),
                consumed_moved BIGINT NOT NULL CHECK (consumed_moved >= 0 AND consumed_moved <= units)
            )
            """,
            PostgresFunctions.applyWithTransfers,
        ]),
        Migration(version: 13, description: "webhook endpoints and API keys managed live", statements: [
            """
            CREATE TABLE ledger_webhook_endpoints (
                name TEXT PRIMARY KEY,
                url TEXT NOT NULL,
                secrets TEXT NOT NULL,
                types TEXT,
                paused BOOLEAN NOT NULL,
                source TEXT NOT NULL,
                revision BIGINT NOT NULL,
                created_at BIGINT NOT NULL,
                updated_at BIGINT NOT NULL
            )
            """,
            // Looked up by digest on every request that presents a key not configured by file or environment.
            """
            CREATE TABLE ledger_api_keys (
                name TEXT PRIMARY KEY,
                digest BYTEA NOT NULL UNIQUE,
                permissions TEXT NOT NULL,
                created_at BIGINT NOT NULL,
                created_by TEXT NOT NULL,
                expires_at BIGINT,
                revoked_at BIGINT,
                last_used_at BIGINT,
                rate_requests BIGINT,
                rate_seconds BIGINT
            )
            """,
        ]),
        Migration(version: 14, description: "money facts: price, currency, storefront, offer and transaction reason of each transaction; ledger_apply_v6 keeps the daily rollups", statements: [
            // `money_known` false: only an app receipt showed the transaction (no price: unknown).
            // Rows stored before this version get theirs from their stored proofs
            // (`MoneyFactsBackfill`) or from Apple's history.
            """
            ALTER TABLE ledger_transactions
                ADD COLUMN money_known BOOLEAN NOT NULL DEFAULT false,
                ADD COLUMN price BIGINT,
                ADD COLUMN currency TEXT,
                ADD COLUMN storefront TEXT,
                ADD COLUMN offer_type BIGINT,
                ADD COLUMN offer_identifier TEXT,
                ADD COLUMN offer_period TEXT,
                ADD COLUMN offer_discount_type TEXT,
                ADD COLUMN transaction_reason TEXT
            """,
            // The daily analytics rollups, moved with every change of a family (FamilyRollup).
            """
            CREATE TABLE ledger_rollups (
                measure TEXT NOT NULL,
                environment TEXT NOT NULL,
                day BIGINT NOT NULL,
                product_id TEXT NOT NULL,
                subscription_group TEXT NOT NULL,
                storefront TEXT NOT NULL,
                currency TEXT NOT NULL,
                offer TEXT NOT NULL,
                count BIGINT NOT NULL,
                amount BIGINT NOT NULL,
                PRIMARY KEY (measure, environment, day, product_id, subscription_group, storefront, currency, offer)
            )
            """,
            // A ledger with transactions gets its rollups computed when it is next opened.
            "CREATE TABLE ledger_analytics_state (singleton INTEGER PRIMARY KEY CHECK (singleton = 1), needs_rebuild BOOLEAN NOT NULL, rebuilt_at BIGINT)",
            "INSERT INTO ledger_analytics_state (singleton, needs_rebuild) SELECT 1, EXISTS (SELECT 1 FROM ledger_transactions)",
            PostgresEvents.loadWithMoney,
            PostgresFunctions.accountWithMoney,
            PostgresFunctions.applyWithMoney,
        ] + PostgresAnalytics.views),
        Migration(
            version: 15,
            description: "the console overview's activity counted per day, kept by triggers; ledger_prune_events_v2 never moves the retention mark past the events",
            statements: PostgresActivityDays.migration + [PostgresEvents.pruneNeverAhead]
        ),
        Migration(
            version: 16,
            description: "the overview's per-day counts spread over 16 rows per day and kind, so concurrent writers stop queueing on today's",
            statements: PostgresActivityDays.shardedMigration
        ),
        Migration(
            version: 17,
            description: "rollup changes queued by each write (ledger_apply_v7) and folded into the rollups in batches",
            statements: [
                // No index: a fold takes every row it sees, and appends spread over the heap.
                // Every row is deleted within a second or so: vacuumed after a few thousand
                // dead rows rather than a fifth of the table, so a read's check for waiting
                // changes does not scan pages of dead ones.
                """
                CREATE TABLE ledger_rollup_changes (sequence bigint GENERATED BY DEFAULT AS IDENTITY, deltas bytea NOT NULL)
                WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 5000)
                """,
                PostgresFunctions.applyQueueingRollups,
            ]
        ),
        Migration(
            version: 18,
            description: "the rollups summed per measure, day and currency, for reads that keep no other dimension",
            statements: [
                // What a read summing over every dimension but the currency needs (the console's
                // overview, a metric not grouped): one row per day, however many products,
                // storefronts and offers the rollups hold that day.
                """
                CREATE TABLE ledger_rollup_days (
                    measure TEXT NOT NULL,
                    environment TEXT NOT NULL,
                    day BIGINT NOT NULL,
                    currency TEXT NOT NULL,
                    count BIGINT NOT NULL,
                    amount BIGINT NOT NULL,
                    PRIMARY KEY (measure, environment, day, currency)
                )
                """,
                // From the rollups as stored; changes still queued reach both tables when folded.
                """
                INSERT INTO ledger_rollup_days (measure, environment, day, currency, count, amount)
                SELECT measure, environment, day, currency, SUM(count)::bigint, SUM(amount)::bigint FROM ledger_rollups
                GROUP BY measure, environment, day, currency
                """,
            ]
        ),
    ]

    /// Sets the owned families' next transition from the rows stored before migration 6: the
    /// earliest expiry or grace period end still ahead (any product: a moment where nothing
    /// changes is examined once and passed).
    static let nextTransitionBackfill: [String] = {
        let now = "(extract(epoch FROM clock_timestamp()) * 1000)::bigint"
        let sameFamily = "x.environment = f.environment AND x.original_transaction_id = f.original_transaction_id"
        return [
            """
            UPDATE ledger_families f SET next_transition_at = LEAST(
                (SELECT MIN(x.expires_date) FROM ledger_transactions x WHERE \(sameFamily) AND x.expires_date > \(now)),
                (SELECT x.grace_period_expires_date FROM ledger_renewals x WHERE \(sameFamily) AND x.grace_period_expires_date > \(now)))
            WHERE f.account_id IS NOT NULL
            """,
        ]
    }()

    /// Applies the missing migrations under the advisory lock.
    ///
    /// - Throws: ``LedgerError/Code/schemaTooNew`` or ``LedgerError/Code/migration``.
    ///
    /// Every known migration the database has not recorded is applied, in order — not only
    /// those above the highest recorded: a version merged after a higher one (live admin's 13
    /// after money facts' 14) still reaches a database already at the higher one. Such a
    /// migration must not depend on the higher ones being absent.
    ///
    /// - Parameters:
    ///   - version: the last migration to apply (tests build older databases); all by default.
    ///   - known: the migrations this StoreGate knows (tests add one).
    static func migrate(
        _ connection: PostgresConnection, logger: Logger, now: Int64, through version: Int? = nil, known: [Migration] = migrations
    ) async throws {
        try await connection.query("SELECT pg_advisory_xact_lock(\(migrationLock))", logger: logger)
        try await connection.query("""
            CREATE TABLE IF NOT EXISTS ledger_migrations (
                version BIGINT PRIMARY KEY,
                description TEXT NOT NULL,
                applied_at BIGINT NOT NULL
            )
            """, logger: logger)
        var applied: Set<Int64> = []
        for try await (recorded) in try await connection.query("SELECT version FROM ledger_migrations", logger: logger).decode(Int64.self) {
            applied.insert(recorded)
        }
        let current = applied.max() ?? 0
        let latest = known.last?.version ?? 0
        guard current <= latest else {
            throw LedgerError(.schemaTooNew, reason: "the database has schema version \(current); this StoreGate knows up to \(latest)")
        }
        for migration in known where !applied.contains(Int64(migration.version)) && migration.version <= (version ?? latest) {
            do {
                for statement in migration.statements {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
            } catch {
                throw LedgerError(.migration, reason: "migration \(migration.version) failed: \(PostgresLedger.describe(error))")
            }
            try await connection.query(
                "INSERT INTO ledger_migrations (version, description, applied_at) VALUES (\(Int64(migration.version)), \(migration.description), \(now))",
                logger: logger
            )
        }
    }
}

extension PostgresLedger {
    /// The schema versions this StoreGate's PostgreSQL ledger applies (10 was never used): a
    /// database is current when `ledger_migrations` records exactly these.
    package static var schemaVersions: [Int] { PostgresSchema.migrations.map(\.version) }
}

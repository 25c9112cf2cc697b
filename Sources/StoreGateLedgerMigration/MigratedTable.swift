/// One table a migration moves: its columns with their kinds, the key it is read in, and how
/// the two backends differ for it.
///
/// The columns are those both schemas share at the current version, under the same names;
/// columns one backend alone keeps are left to that backend (PostgreSQL's family and
/// transaction `revision`, which start at 0 in a new database, and the events' `xid`). Tables
/// one backend alone keeps are derived there (SQLite's timeline index `ledger_event_accounts`
/// and its mark, which PostgreSQL replaces by an index on `ledger_events`).
struct MigratedTable: Sendable {
    /// What a column holds, as both backends must agree on it.
    enum Kind: Sendable {
        /// A 64-bit integer (SQLite `INTEGER`, PostgreSQL `BIGINT`).
        case integer
        /// UTF-8 text.
        case text
        /// Bytes (SQLite `BLOB`, PostgreSQL `BYTEA`).
        case blob
        /// A boolean (SQLite 0 or 1, PostgreSQL `BOOLEAN`).
        case boolean
        /// A JSON object (SQLite's bytes as the service wrote them, PostgreSQL `JSONB`): compared
        /// by value, since PostgreSQL normalizes its text.
        case json
    }

    /// A column: its name in both schemas and its kind.
    struct Column: Sendable {
        let name: String
        let kind: Kind
    }

    /// The table's name (the PostgreSQL table it is copied into).
    let name: String
    /// Its columns, compared in this order.
    let columns: [Column]
    /// The columns (a prefix-free subset of ``columns``) both sides are read in order of; empty
    /// for a one-row table.
    let key: [String]
    /// What SQLite reads the columns from, when not the table itself (the event head, which
    /// SQLite keeps as the newest event and `ledger_event_index`).
    let sqliteSource: String?
    /// Columns PostgreSQL alone has that the copy sets from a copied column (the events'
    /// `position`, set to their `sequence` so that positions and sequences keep one order).
    let copiedAlso: [(column: String, from: String)]
    /// Whether the new target already holds this table's one row (migrations insert it): the
    /// copy replaces it.
    let isSingleton: Bool

    init(
        _ name: String, _ columns: [(String, Kind)], key: [String], sqliteSource: String? = nil,
        copiedAlso: [(column: String, from: String)] = [], isSingleton: Bool = false
    ) {
        self.name = name
        self.columns = columns.map { Column(name: $0.0, kind: $0.1) }
        self.key = key
        self.sqliteSource = sqliteSource
        self.copiedAlso = copiedAlso
        self.isSingleton = isSingleton
    }

    /// The positions of the key columns in ``columns``.
    var keyIndexes: [Int] {
        key.compactMap { name in columns.firstIndex { $0.name == name } }
    }

    /// The columns' names, comma-separated.
    var columnList: String { columns.map(\.name).joined(separator: ", ") }

    /// The columns the copy writes, in the order it writes them.
    var copyColumns: [String] { columns.map(\.name) + copiedAlso.map(\.column) }
}

extension MigratedTable {
    /// Every table of the ledger at schema 15, in the order they are copied (parents of the
    /// outbox first; none of them has a foreign key, so the order is only for people reading
    /// the progress).
    static let all: [MigratedTable] = [
        MigratedTable("ledger_families", [
            ("environment", .text), ("original_transaction_id", .text), ("account_id", .text), ("next_transition_at", .integer),
        ], key: ["environment", "original_transaction_id"]),
        MigratedTable("ledger_transactions", [
            ("environment", .text), ("transaction_id", .text), ("original_transaction_id", .text), ("account_id", .text),
            ("bundle_id", .text), ("product_id", .text), ("product_type", .text), ("has_apple_metadata", .boolean),
            ("subscription_group", .text), ("quantity", .integer), ("purchase_date", .integer), ("original_purchase_date", .integer),
            ("expires_date", .integer), ("revocation_date", .integer), ("revocation_reason", .integer), ("is_upgraded", .boolean),
            ("web_order_line_item_id", .text), ("app_account_token", .text), ("observed_at", .integer), ("source", .text),
            ("proof_digest", .blob), ("recorded_at", .integer), ("updated_at", .integer), ("money_known", .boolean),
            ("price", .integer), ("currency", .text), ("storefront", .text), ("offer_type", .integer), ("offer_identifier", .text),
            ("offer_period", .text), ("offer_discount_type", .text), ("transaction_reason", .text),
        ], key: ["environment", "original_transaction_id", "transaction_id"]),
        MigratedTable("ledger_renewals", [
            ("environment", .text), ("original_transaction_id", .text), ("product_id", .text), ("auto_renew_product_id", .text),
            ("will_auto_renew", .boolean), ("expiration_intent", .integer), ("is_in_billing_retry_period", .boolean),
            ("grace_period_expires_date", .integer), ("renewal_date", .integer), ("observed_at", .integer), ("tiebreak", .text),
        ], key: ["environment", "original_transaction_id"]),
        MigratedTable("ledger_notifications", [
            ("notification_uuid", .text), ("environment", .text), ("notification_type", .text), ("subtype", .text),
            ("signed_date", .integer), ("transaction_id", .text), ("original_transaction_id", .text), ("proof_digest", .blob),
            ("received_at", .integer),
        ], key: ["notification_uuid"]),
        // Sealed proofs are copied as stored: never opened, so no key is needed.
        MigratedTable("ledger_proofs", [
            ("digest", .blob), ("kind", .text), ("environment", .text), ("key_id", .text), ("sealed", .blob), ("received_at", .integer),
        ], key: ["digest"]),
        MigratedTable("ledger_balances", [
            ("account_id", .text), ("product_id", .text), ("purchased", .integer), ("refunded", .integer), ("consumed", .integer),
        ], key: ["account_id", "product_id"]),
        MigratedTable("ledger_consumptions", [
            ("account_id", .text), ("idempotency_key", .text), ("product_id", .text), ("quantity", .integer), ("consumed_at", .integer),
            ("remaining", .integer),
        ], key: ["account_id", "idempotency_key"]),
        MigratedTable("ledger_events", [
            ("sequence", .integer), ("id", .text), ("account_id", .text), ("type", .text), ("recorded_at", .integer), ("payload", .json),
        ], key: ["sequence"], copiedAlso: [(column: "position", from: "sequence")]),
        // The newest sequence (the sequencer numbers on from it) and how far retention deleted.
        MigratedTable("ledger_event_head", [
            ("singleton", .boolean), ("last", .integer), ("pruned_through", .integer),
        ], key: [], sqliteSource: """
            (SELECT 1 AS singleton, (SELECT COALESCE(MAX(sequence), 0) FROM ledger_events) AS last, pruned_through \
            FROM ledger_event_index)
            """, isSingleton: true),
        MigratedTable("ledger_webhook_cursors", [("endpoint", .text), ("sequence", .integer)], key: ["endpoint"]),
        MigratedTable("ledger_deliveries", [
            ("endpoint", .text), ("sequence", .integer), ("event_id", .text), ("event_type", .text), ("account_id", .text),
            ("status", .text), ("attempts", .integer), ("first_attempt_at", .integer), ("next_attempt_at", .integer),
            ("claimed_by", .text), ("claimed_until", .integer), ("last_status", .integer), ("last_error", .text),
            ("delivered_at", .integer),
        ], key: ["endpoint", "sequence"]),
        MigratedTable("ledger_leased_states", [
            ("name", .text), ("value", .text), ("holder", .text), ("lease_until", .integer), ("updated_at", .integer),
        ], key: ["name"]),
        MigratedTable("ledger_grants", [
            ("id", .text), ("account_id", .text), ("entitlement", .text), ("starts_at", .integer), ("expires_at", .integer),
            ("reason", .text), ("granted_by", .text), ("idempotency_key", .text), ("request_digest", .text), ("revoked_at", .integer),
            ("revoked_by", .text), ("revocation_reason", .text), ("expiry_emitted", .boolean),
        ], key: ["id"]),
        MigratedTable("ledger_entitlement_snapshots", [
            ("account_id", .text), ("snapshot", .text), ("next_check_at", .integer),
        ], key: ["account_id"]),
        MigratedTable("ledger_transfers", [
            ("id", .text), ("environment", .text), ("original_transaction_id", .text), ("from_account", .text), ("to_account", .text),
            ("transferred_at", .integer), ("source", .text), ("actor", .text), ("reason", .text), ("product_id", .text),
            ("units", .integer), ("refunded_units", .integer), ("consumed_moved", .integer),
        ], key: ["id"]),
        // Endpoints' signing secrets and API keys' digests are copied as stored, never printed.
        MigratedTable("ledger_webhook_endpoints", [
            ("name", .text), ("url", .text), ("secrets", .text), ("types", .text), ("paused", .boolean), ("source", .text),
            ("revision", .integer), ("created_at", .integer), ("updated_at", .integer),
        ], key: ["name"]),
        MigratedTable("ledger_api_keys", [
            ("name", .text), ("digest", .blob), ("permissions", .text), ("created_at", .integer), ("created_by", .text),
            ("expires_at", .integer), ("revoked_at", .integer), ("last_used_at", .integer), ("rate_requests", .integer),
            ("rate_seconds", .integer),
        ], key: ["name"]),
        MigratedTable("ledger_rollups", [
            ("measure", .text), ("environment", .text), ("day", .integer), ("product_id", .text), ("subscription_group", .text),
            ("storefront", .text), ("currency", .text), ("offer", .text), ("count", .integer), ("amount", .integer),
        ], key: ["measure", "environment", "day", "product_id", "subscription_group", "storefront", "currency", "offer"]),
        // Their sums per measure, day and currency (schema 18), copied as the source holds them.
        MigratedTable("ledger_rollup_days", [
            ("measure", .text), ("environment", .text), ("day", .integer), ("currency", .text), ("count", .integer), ("amount", .integer),
        ], key: ["measure", "environment", "day", "currency"]),
        // The rollup changes not folded yet (schema 17): the same encoding on both sides.
        MigratedTable("ledger_rollup_changes", [("sequence", .integer), ("deltas", .blob)], key: ["sequence"]),
        MigratedTable("ledger_analytics_state", [
            ("singleton", .integer), ("needs_rebuild", .boolean), ("rebuilt_at", .integer),
        ], key: [], isSingleton: true),
        // The overview's per-day counts (schema 15), copied as the source holds them: the
        // target's triggers stand aside while its copies run (`storegate.copying`).
        MigratedTable("ledger_activity_days", [("day", .integer), ("kind", .text), ("count", .integer)], key: ["day", "kind"]),
    ]
}

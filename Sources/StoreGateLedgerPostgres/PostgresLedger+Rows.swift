import Foundation
import Logging
import NIOCore
import PostgresNIO
import StoreGateCore
import StoreGateLedger

/// A value bound to a query parameter.
enum PostgresValue: Sendable {
    case null
    case integer(Int64)
    case text(String)
    case bool(Bool)
    case bytes([UInt8])
    case texts([String])
    case integers([Int64])
    case bools([Bool])

    static func optional(_ text: String?) -> PostgresValue { text.map { .text($0) } ?? .null }
    static func optional(_ number: Int64?) -> PostgresValue { number.map { .integer($0) } ?? .null }
    static func optional(_ number: Int?) -> PostgresValue { number.map { .integer(Int64($0)) } ?? .null }
}

extension PostgresRandomAccessRow {
    func text(_ index: Int) throws -> String { try self[index].decode(String.self) }
    func optionalText(_ index: Int) throws -> String? { try self[index].decode(String?.self) }
    func integer(_ index: Int) throws -> Int64 { try self[index].decode(Int64.self) }
    func int(_ index: Int) throws -> Int { Int(try integer(index)) }
    func optionalInteger(_ index: Int) throws -> Int64? { try self[index].decode(Int64?.self) }
    func bool(_ index: Int) throws -> Bool { try self[index].decode(Bool.self) }
    func bytes(_ index: Int) throws -> [UInt8] { Array(try self[index].decode(ByteBuffer.self).readableBytesView) }
    func optionalBytes(_ index: Int) throws -> [UInt8]? { try self[index].decode(ByteBuffer?.self).map { Array($0.readableBytesView) } }
    func optionalDate(_ index: Int) throws -> Date? { try optionalInteger(index).map(Date.init(ledgerMilliseconds:)) }
}

/// Loading and storing the ledger's rows in PostgreSQL.
extension PostgresLedger {
    static let transactionColumns = """
        environment, transaction_id, original_transaction_id, account_id, bundle_id, product_id, product_type, \
        has_apple_metadata, subscription_group, quantity, purchase_date, original_purchase_date, expires_date, \
        revocation_date, revocation_reason, is_upgraded, web_order_line_item_id, app_account_token, observed_at, \
        source, proof_digest
        """

    static func bindings(_ values: [PostgresValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let number): bindings.append(number)
            case .text(let text): bindings.append(text)
            case .bool(let flag): bindings.append(flag)
            case .bytes(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            case .texts(let texts): bindings.append(texts)
            case .integers(let numbers): bindings.append(numbers)
            case .bools(let flags): bindings.append(flags)
            }
        }
        return bindings
    }

    static func query(_ sql: String, _ values: [PostgresValue]) -> PostgresQuery {
        PostgresQuery(unsafeSQL: sql, binds: bindings(values))
    }

    /// Runs a statement and collects its rows.
    static func rows(_ connection: PostgresConnection, _ sql: String, _ values: [PostgresValue] = [], logger: Logger) async throws -> [PostgresRandomAccessRow] {
        var rows: [PostgresRandomAccessRow] = []
        for try await row in try await connection.query(query(sql, values), logger: logger) {
            rows.append(row.makeRandomAccess())
        }
        return rows
    }

    /// Runs a statement for its effect.
    static func run(_ connection: PostgresConnection, _ sql: String, _ values: [PostgresValue], logger: Logger) async throws {
        try await connection.query(query(sql, values), logger: logger)
    }

    // MARK: Multi-kind rows

    /// The column types of the multi-kind statements: a `kind` column, then these 22 columns,
    /// which hold a transaction (and its revision) or another kind of row at fixed positions.
    ///
    /// Frozen: the functions of schemas 1 to 13 (`ledger_load_v1`, `ledger_account_v1`,
    /// `ledger_load_v2`) return this shape; from schema 14 the functions return
    /// ``shapeTypes``, these and the money columns.
    static let shapeTypesV1 = [
        "text", "text", "text", "text", "text", "text", "text", "boolean", "text", "bigint", "bigint",
        "bigint", "bigint", "bigint", "bigint", "boolean", "text", "text", "bigint", "text", "bytea", "bigint",
    ]

    /// The types of the money columns (``moneyColumns``), at positions 22 to 30 of a
    /// multi-kind row from schema 14.
    static let moneyShapeTypes = ["boolean", "bigint", "text", "text", "bigint", "text", "text", "text", "text"]

    /// The column types of the multi-kind statements from schema 14.
    static let shapeTypes = shapeTypesV1 + moneyShapeTypes

    /// The money columns of `ledger_transactions` (schema 14), `money_known` first.
    static let moneyColumns = """
        money_known, price, currency, storefront, offer_type, offer_identifier, offer_period, offer_discount_type, \
        transaction_reason
        """

    /// A transaction's columns, its revision and its money columns: what every read of
    /// transactions from schema 14 selects (``decodeTransaction(_:offset:)``).
    static let transactionSelect = transactionColumns + ", revision, " + moneyColumns

    /// A `SELECT` of `kind` with `columns` at their positions and typed `NULL`s elsewhere, in
    /// the shape of schema 14 (`money`) or the frozen one before it.
    static func shaped(_ kind: String, _ columns: [Int: String], money: Bool = true) -> String {
        let types = money ? shapeTypes : shapeTypesV1
        return "SELECT '\(kind)'::text" + types.indices.map { ", " + (columns[$0] ?? "NULL::\(types[$0])") }.joined()
    }

    /// Where a transaction's columns sit in a multi-kind row: its 21 columns, its revision,
    /// then (`money`, from schema 14) its money columns.
    static func transactionShape(money: Bool) -> [Int: String] {
        var columns: [Int: String] = [:]
        for (index, name) in transactionColumns.split(separator: ",").enumerated() {
            columns[index] = "t." + name.trimmingCharacters(in: .whitespaces)
        }
        columns[21] = "t.revision"
        if money {
            for (index, name) in moneyColumns.split(separator: ",").enumerated() {
                columns[22 + index] = "t." + name.trimmingCharacters(in: .whitespaces)
            }
        }
        return columns
    }

    /// Where a renewal info's columns sit in a multi-kind row.
    static let renewalShape: [Int: String] = [
        0: "r.environment", 2: "r.original_transaction_id", 5: "r.product_id", 4: "r.auto_renew_product_id",
        7: "r.will_auto_renew", 14: "r.expiration_intent", 15: "r.is_in_billing_retry_period",
        12: "r.grace_period_expires_date", 13: "r.renewal_date", 18: "r.observed_at",
    ]

    /// What recording needs, in one statement: the families touched ($1, $2), the
    /// transactions touched ($3, $4), the unowned transactions of unowned families touched,
    /// and whether notification $5 was taken before.
    ///
    /// Keys come from `unnest` into `LATERAL` lookups, so whatever the statistics were when
    /// the plan was cached, each key is one index probe (never a scan of the table).
    static func loadStatement(money: Bool) -> String { [
        shaped("f", [0: "f.environment", 2: "f.original_transaction_id", 3: "f.account_id"], money: money) + """
             FROM unnest($1::text[], $2::text[]) AS k(environment, original_transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_families f1
                WHERE f1.environment = k.environment AND f1.original_transaction_id = k.original_transaction_id) f ON true
            """,
        shaped("t", transactionShape(money: money), money: money) + """
             FROM unnest($3::text[], $4::text[]) AS k(environment, transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_transactions t1
                WHERE t1.environment = k.environment AND t1.transaction_id = k.transaction_id) t ON true
            """,
        shaped("t", transactionShape(money: money), money: money) + """
             FROM unnest($1::text[], $2::text[]) AS k(environment, original_transaction_id)
            JOIN LATERAL (SELECT * FROM ledger_families f1
                WHERE f1.environment = k.environment AND f1.original_transaction_id = k.original_transaction_id
                  AND COALESCE(f1.account_id, '') = '') f ON true
            JOIN LATERAL (SELECT * FROM ledger_transactions t1
                WHERE t1.environment = f.environment AND t1.original_transaction_id = f.original_transaction_id
                  AND COALESCE(t1.account_id, '') = '') t ON true
            """,
        shaped("n", [1: "n.notification_uuid"], money: money) + " FROM ledger_notifications n WHERE n.notification_uuid = $5",
    ].joined(separator: "\nUNION ALL\n") }

    /// Everything about account $1, in one statement (one snapshot); families through
    /// `LATERAL` index probes, as in ``loadStatement``.
    static func accountStatement(money: Bool) -> String { [
        shaped("t", transactionShape(money: money), money: money) + " FROM ledger_transactions t WHERE t.account_id = $1",
        shaped("r", renewalShape, money: money) + """
             FROM ledger_families f JOIN LATERAL (SELECT * FROM ledger_renewals r1
                WHERE r1.environment = f.environment AND r1.original_transaction_id = f.original_transaction_id) r ON true
            WHERE f.account_id = $1
            """,
        shaped("n", [
            1: "n.notification_uuid", 6: "n.notification_type", 8: "n.subtype", 10: "n.signed_date", 0: "n.environment",
            16: "n.transaction_id", 2: "n.original_transaction_id",
        ], money: money) + """
             FROM ledger_families f JOIN LATERAL (SELECT * FROM ledger_notifications n1
                WHERE n1.environment = f.environment AND n1.original_transaction_id = f.original_transaction_id) n ON true
            WHERE f.account_id = $1
            """,
        shaped("b", [5: "b.product_id", 9: "b.purchased", 10: "b.refunded", 11: "b.consumed"], money: money)
            + " FROM ledger_balances b WHERE b.account_id = $1",
    ].joined(separator: "\nUNION ALL\n") }

    /// What ``load(_:families:transactions:notification:logger:)`` found.
    struct Loaded {
        var state = PlanningState()
        var revisions: [TransactionKey: Int64] = [:]
        var familyRevisions: [FamilyKey: Int64] = [:]
        var notificationExists = false
        /// The families the load looked for (found or not).
        var askedFamilies: Set<FamilyKey> = []
    }

    // MARK: Loading

    static func load(
        _ connection: PostgresConnection, families: [FamilyKey], transactions: [TransactionKey], notification: String?, logger: Logger
    ) async throws -> Loaded {
        let values: [PostgresValue] = [
            .texts(families.map(\.environment.rawValue)), .texts(families.map(\.originalTransactionId)),
            .texts(transactions.map(\.environment.rawValue)), .texts(transactions.map(\.transactionId)),
            .text(notification ?? ""),
        ]
        var loaded = Loaded()
        loaded.askedFamilies = Set(families)
        for row in try await execute(LoadWithEventsSQL.self, connection, values, logger: logger) {
            switch try row.text(0) {
            case "f":
                let key = FamilyKey(environment: AppStoreEnvironment(rawValue: try row.text(1)), originalTransactionId: try row.text(3))
                loaded.state.families[key] = FamilyRow(
                    key: key, account: try row.optionalText(4).map(account), nextTransitionAt: try row.optionalDate(11)
                )
                loaded.familyRevisions[key] = try row.integer(22)
            case "t":
                let transaction = try decodeTransaction(row, offset: 1)
                loaded.state.transactions[transaction.key] = transaction
                loaded.revisions[transaction.key] = try row.integer(22)
            case "r":
                let renewal = try decodeRenewal(row)
                loaded.state.renewals[renewal.key] = renewal
            default:
                loaded.notificationExists = true
            }
        }
        return loaded
    }

    static func loadTransactions(_ connection: PostgresConnection, _ keys: [TransactionKey], logger: Logger) async throws -> [TransactionRow] {
        var result: [TransactionRow] = []
        for key in keys {
            for row in try await execute(TransactionSQL.self, connection, [.text(key.environment.rawValue), .text(key.transactionId)], logger: logger) {
                result.append(try decodeTransaction(row, offset: 0))
            }
        }
        return result
    }

    static func loadAccount(_ connection: PostgresConnection, _ account: AccountID, logger: Logger) async throws -> AccountRecords {
        var records = AccountRecords()
        for row in try await execute(AccountSQL.self, connection, [.text(account.rawValue)], logger: logger) {
            try take(row, into: &records)
        }
        return records
    }

    /// ``loadAccount(_:_:logger:)`` and the account's grants, newest first, in one statement.
    static func loadAccountWithGrants(_ connection: PostgresConnection, _ account: AccountID, logger: Logger) async throws -> (AccountRecords, [EntitlementGrant]) {
        var records = AccountRecords()
        var grants: [EntitlementGrant] = []
        for row in try await execute(AccountWithGrantsSQL.self, connection, [.text(account.rawValue)], logger: logger) {
            if try row.text(0) == "g" {
                grants.append(try shapedGrant(row))
            } else {
                try take(row, into: &records)
            }
        }
        grants.sort { ($0.startsAt, $0.id) > ($1.startsAt, $1.id) }
        return (records, grants)
    }

    /// Where a grant's columns sit in the shaped rows: texts, then its three instants.
    static let grantShape: [Int: String] = [
        0: "g.id", 1: "g.account_id", 2: "g.entitlement", 3: "g.reason", 4: "g.granted_by", 5: "g.idempotency_key",
        6: "g.revoked_by", 8: "g.revocation_reason", 9: "g.starts_at", 10: "g.expires_at", 11: "g.revoked_at",
    ]

    /// A grant from a row of kind `g` (``grantShape``, one column later for `kind`).
    private static func shapedGrant(_ row: PostgresRandomAccessRow) throws -> EntitlementGrant {
        EntitlementGrant(
            id: try row.text(1), account: AccountID(stored: try row.text(2)), entitlement: try row.text(3),
            startsAt: Date(ledgerMilliseconds: try row.integer(10)), expiresAt: Date(ledgerMilliseconds: try row.integer(11)), reason: try row.text(4),
            grantedBy: try row.text(5), idempotencyKey: try row.text(6), revokedAt: try row.optionalDate(12), revokedBy: try row.optionalText(7),
            revocationReason: try row.optionalText(9)
        )
    }

    /// Adds one row of ``accountStatement`` to `records`.
    private static func take(_ row: PostgresRandomAccessRow, into records: inout AccountRecords) throws {
        switch try row.text(0) {
        case "t":
            records.transactions.append(try decodeTransaction(row, offset: 1).value)
        case "r":
            let renewal = try decodeRenewal(row)
            records.renewals[renewal.key] = renewal
        case "n":
            records.notifications.append(RecordedNotification(
                notificationUUID: try row.text(2),
                notificationType: try row.text(7),
                subtype: try row.optionalText(9),
                signedDate: Date(ledgerMilliseconds: try row.integer(11)),
                environment: AppStoreEnvironment(rawValue: try row.text(1)),
                transactionId: try row.optionalText(17),
                originalTransactionId: try row.optionalText(3)
            ))
        default:
            records.balances.append(ConsumableBalance(
                productId: try row.text(6), purchased: try row.int(10), refunded: try row.int(11), consumed: try row.int(12)
            ))
        }
    }

    // MARK: Storing

    /// Writes `plan` with `ledger_apply_v7`, in one round trip and one implicit transaction.
    ///
    /// A plan that stores renewal info for a family the load did not find also inserts that
    /// family's row, without an owner (``familyMarkers(_:loaded:)``).
    static func apply(_ plan: LedgerWritePlan, loaded: Loaded, at date: Date, _ connection: PostgresConnection, logger: Logger) async throws {
        var plan = plan
        let markers = familyMarkers(plan, loaded: loaded)
        if !markers.isEmpty { plan.familyInserts = (plan.familyInserts + markers).sorted { $0.key < $1.key } }
        let claimed = Set(plan.familyClaims.map(\.key))
        let unowned = loaded.state.families.values
            .filter { $0.account == nil && !claimed.contains($0.key) }
            .map(\.key)
            .sorted()
        // Queued, the rollup changes travel encoded beside the plan to ledger_apply_v7 (schema
        // 17); otherwise, or with none, ledger_apply_v6 adds the plan's list itself.
        let queued = plan.queuesRollupChanges && !plan.rollupDeltas.isEmpty
        let changes: PostgresValue = queued ? .bytes(plan.queuedRollupDeltas) : .null
        if queued { plan.rollupDeltas = [] }
        let document = PostgresPlanJSON.encode(
            plan, revisions: loaded.revisions, familyRevisions: loaded.familyRevisions, unownedFamilies: unowned,
            now: date.ledgerMilliseconds
        )
        let sealed = plan.proof?.sealed.map { PostgresValue.bytes($0.combined) } ?? .null
        let values = [.text(document), sealed] + PostgresPlanJSON.eventParameters(plan.events)
        if queued {
            _ = try await execute(ApplyWithEventsSQL.self, connection, values + [changes], logger: logger)
        } else {
            _ = try await execute(ApplyAddingRollupsSQL.self, connection, values, logger: logger)
            // ledger_apply_v6 predates the day sums (schema 18): they follow in a statement of
            // their own, outside its transaction. Only `bench write-costs`' comparison with
            // schema 16 and a test turn queueing off.
            if plan.addsRollupDays { try await addRollupDays(plan.rollupDeltas, connection, logger: logger) }
        }
    }

    /// The family rows (without owner or transactions) a plan inserts beside renewal info for
    /// a family that is not stored: a renewal-only notification arriving before the family's
    /// first purchase.
    ///
    /// The write path's concurrency check is the family row: `ledger_apply_v7` refuses (40001)
    /// a plan whose loaded families' revisions moved, and an insert of a family that exists
    /// fails on its primary key (23505) — both retried after a new load. A family the load did
    /// not find has no revision to check, so without its row a renewal-only notification and
    /// the family's first purchase, written at once, each computed their rollup deltas (the
    /// churn the renewal info decides) from a view lacking the other's change, and the kept
    /// rollups differed from ``PostgresLedger/rebuildRollups()``. With the row, whichever of
    /// the two commits second fails on the family's primary key (waiting for the first to
    /// commit), reloads and plans from both changes; writes to stored families, and a first
    /// purchase with no such notification, pay nothing more. The row is what a notification
    /// carrying a transaction already leaves: a family no account owns yet, claimed by its
    /// first purchase; without transactions it adds no rollup, event or entitlement. Only a
    /// family the load looked for and did not find gets one (a proof's renewal info for a
    /// family none of its transactions belongs to is not looked for: it may be stored).
    static func familyMarkers(_ plan: LedgerWritePlan, loaded: Loaded) -> [FamilyRow] {
        guard !plan.renewals.isEmpty else { return [] }
        let inserted = Set(plan.familyInserts.map(\.key))
        let missing = Set(plan.renewals.map(\.key)).filter { key in
            loaded.askedFamilies.contains(key) && loaded.state.families[key] == nil && !inserted.contains(key)
        }
        return missing.sorted().map { FamilyRow(key: $0, account: nil) }
    }

    /// Appends events alone (a refusal), numbered as any plan's.
    static func appendEvents(_ events: [LedgerEvent], at date: Date, _ connection: PostgresConnection, logger: Logger) async throws {
        var plan = LedgerWritePlan()
        plan.events = events
        let document = PostgresPlanJSON.encode(plan, revisions: [:], familyRevisions: [:], unownedFamilies: [], now: date.ledgerMilliseconds)
        _ = try await execute(
            ApplyAddingRollupsSQL.self, connection, [.text(document), .null] + PostgresPlanJSON.eventParameters(events), logger: logger
        )
    }

    /// Numbers events until every transaction that began before the call has ended and its
    /// events are numbered (at most one second: a long transaction elsewhere only delays
    /// them), so a change that committed before the call is readable. Not inside a
    /// transaction of one's own (it would wait for itself).
    static func settleEvents(_ connection: PostgresConnection, within limit: Duration = .seconds(1), logger: Logger) async throws {
        let target = try await execute(SnapshotXmaxSQL.self, connection, [], logger: logger).first?.text(0) ?? "0"
        let deadline = ContinuousClock.now + limit
        while true {
            let settled = try await execute(SequenceUntilSQL.self, connection, [.text(target)], logger: logger).first?.bool(0) ?? true
            if settled || ContinuousClock.now >= deadline { return }
            try await Task.sleep(for: .milliseconds(2))
        }
    }

    /// Reads the numbered stream after `sequence` (``settleEvents(_:logger:)`` first to include
    /// what committed just before).
    ///
    /// - Throws: ``LedgerError/Code/cursorExpired`` when retention deleted events after `sequence`.
    static func loadEvents(_ connection: PostgresConnection, after sequence: Int64, limit: Int, logger: Logger) async throws -> [LedgerEvent] {
        var events: [LedgerEvent] = []
        var prunedThrough: Int64 = 0
        for row in try await execute(EventsSQL.self, connection, [.integer(sequence), .integer(Int64(limit))], logger: logger) {
            prunedThrough = try row.integer(0)
            events.append(try LedgerEvent(stored: Array(try row.text(2).utf8), sequence: try row.integer(1)))
        }
        // An empty page is never expired (retention keeps the newest event).
        try LedgerPlanner.checkCursor(sequence, prunedThrough: prunedThrough)
        return events
    }

    /// One consumption in one statement: replay by key, else a conditional decrement and the
    /// key's row, else the balance that was not enough. A concurrent call with the same key
    /// loses on the key's primary key, is retried, and replays.
    static let consumeStatement = """
        WITH prior AS (
            SELECT product_id, quantity, consumed_at, remaining FROM ledger_consumptions
            WHERE account_id = $1 AND idempotency_key = $4
        ), updated AS (
            UPDATE ledger_balances SET consumed = consumed + $3
            WHERE account_id = $1 AND product_id = $2 AND purchased - consumed >= $3 AND NOT EXISTS (SELECT 1 FROM prior)
            RETURNING purchased - consumed AS remaining
        ), inserted AS (
            INSERT INTO ledger_consumptions (account_id, idempotency_key, product_id, quantity, consumed_at, remaining)
            SELECT $1, $4, $2, $3, $5, GREATEST(remaining, 0) FROM updated
            RETURNING consumed_at, remaining
        )
        SELECT 'replay'::text, product_id, quantity, consumed_at, remaining FROM prior
        UNION ALL
        SELECT 'consumed'::text, $2, $3, consumed_at, remaining FROM inserted
        UNION ALL
        SELECT 'insufficient'::text, $2, $3, 0::bigint, GREATEST(purchased - consumed, 0) FROM ledger_balances
        WHERE account_id = $1 AND product_id = $2 AND NOT EXISTS (SELECT 1 FROM prior) AND NOT EXISTS (SELECT 1 FROM updated)
        """

    static func consume(
        _ connection: PostgresConnection, productId: String, quantity: Int, key: String, account: AccountID, at date: Date, recordedAt: Date,
        logger: Logger
    ) async throws -> ConsumptionReceipt {
        let at = date.ledgerNormalized
        let rows = try await execute(
            ConsumeWithEventSQL.self, connection,
            [
                .text(account.rawValue), .text(productId), .integer(Int64(quantity)), .text(key), .integer(at.ledgerMilliseconds),
                .text(UUID().uuidString.lowercased()), .integer(recordedAt.ledgerMilliseconds),
            ],
            logger: logger
        )
        guard let row = rows.first else {
            throw LedgerError(.insufficientBalance, reason: "the balance is lower than the quantity", productId: productId, available: 0)
        }
        let consumption = ConsumptionRow(
            account: account, idempotencyKey: key, productId: try row.text(1), quantity: try row.int(2),
            consumedAt: Date(ledgerMilliseconds: try row.integer(3)), remaining: try row.int(4)
        )
        switch try row.text(0) {
        case "replay":
            guard consumption.productId == productId, consumption.quantity == quantity else {
                throw LedgerError(.idempotencyKeyReused, reason: "the idempotency key was used for another product or quantity", productId: productId)
            }
            return consumption.receipt(isReplay: true)
        case "consumed":
            return consumption.receipt(isReplay: false)
        default:
            throw LedgerError(.insufficientBalance, reason: "the balance is lower than the quantity", productId: productId, available: consumption.remaining)
        }
    }

    static func invariants(_ connection: PostgresConnection, logger: Logger) async throws -> LedgerInvariants {
        var figures = LedgerInvariants()
        for row in try await rows(connection, """
            SELECT COUNT(*)::BIGINT FROM ledger_transactions t LEFT JOIN ledger_families f
              ON f.environment = t.environment AND f.original_transaction_id = t.original_transaction_id
            WHERE f.original_transaction_id IS NULL OR t.account_id IS DISTINCT FROM f.account_id
            """, logger: logger) {
            figures.ownershipMismatches = try row.int(0)
        }
        for row in try await rows(connection, """
            SELECT account_id, product_id,
                   SUM(CASE WHEN revocation_date IS NULL THEN quantity ELSE 0 END)::BIGINT,
                   SUM(CASE WHEN revocation_date IS NULL THEN 0 ELSE quantity END)::BIGINT
            FROM ledger_transactions WHERE account_id IS NOT NULL AND product_type = $1 GROUP BY account_id, product_id
            """, [.text(ProductType.consumable.rawValue)], logger: logger) {
            figures.expected[BalanceKey(account: account(try row.text(0)), productId: try row.text(1))] = (try row.int(2), try row.int(3))
        }
        for row in try await rows(connection, "SELECT account_id, product_id, purchased, refunded, consumed FROM ledger_balances", logger: logger) {
            let key = BalanceKey(account: account(try row.text(0)), productId: try row.text(1))
            figures.stored[key] = ConsumableBalance(productId: key.productId, purchased: try row.int(2), refunded: try row.int(3), consumed: try row.int(4))
        }
        for row in try await rows(connection, "SELECT account_id, product_id, SUM(quantity)::BIGINT FROM ledger_consumptions GROUP BY account_id, product_id", logger: logger) {
            figures.consumed[BalanceKey(account: account(try row.text(0)), productId: try row.text(1))] = try row.int(2)
        }
        // Consumed units that left with a purchase moved to another account (schema 12).
        for row in try await rows(connection, """
            SELECT from_account, to_account, product_id, consumed_moved, refunded_units FROM ledger_transfers WHERE product_id IS NOT NULL
            """, logger: logger) {
            figures.addTransfer(
                from: account(try row.text(0)), to: account(try row.text(1)), productId: try row.text(2), consumedMoved: try row.int(3),
                refundedUnits: try row.int(4)
            )
        }
        return figures
    }

    // MARK: Decoding

    /// An account id read back: it was validated when it was written.
    private static func account(_ text: String) -> AccountID {
        AccountID(stored: text)
    }

    /// A renewal info from a multi-kind row (``renewalShape``).
    private static func decodeRenewal(_ row: PostgresRandomAccessRow) throws -> RenewalRow {
        RenewalRow(
            key: FamilyKey(environment: AppStoreEnvironment(rawValue: try row.text(1)), originalTransactionId: try row.text(3)),
            productId: try row.text(6),
            autoRenewProductId: try row.optionalText(5),
            willAutoRenew: try row.bool(8),
            expirationIntent: try row.optionalInteger(15).map { Int($0) },
            isInBillingRetryPeriod: try row.bool(16),
            gracePeriodExpiresDate: try row.optionalDate(13),
            renewalDate: try row.optionalDate(14),
            observedAt: Date(ledgerMilliseconds: try row.integer(19))
        )
    }

    /// The money facts at `column` (`money_known` first; ``moneyColumns``).
    static func decodeMoney(_ row: PostgresRandomAccessRow, at column: Int) throws -> MoneyFacts? {
        guard try row.bool(column) else { return nil }
        return MoneyFacts(
            price: try row.optionalInteger(column + 1), currency: try row.optionalText(column + 2),
            storefront: try row.optionalText(column + 3), offerType: try row.optionalInteger(column + 4).map { Int($0) },
            offerIdentifier: try row.optionalText(column + 5), offerPeriod: try row.optionalText(column + 6),
            offerDiscountType: try row.optionalText(column + 7), transactionReason: try row.optionalText(column + 8)
        )
    }

    /// A transaction from its 21 columns starting at `offset`, its revision, and its money
    /// columns (``transactionSelect``, or a multi-kind row of schema 14).
    static func decodeTransaction(_ row: PostgresRandomAccessRow, offset o: Int) throws -> TransactionRow {
        guard let source = ProofKind(rawValue: try row.text(o + 19)) else {
            throw LedgerError(.storage, reason: "a stored transaction names an unknown proof kind")
        }
        var token: UUID?
        if let text = try row.optionalText(o + 17) {
            guard let parsed = UUID(uuidString: text) else {
                throw LedgerError(.storage, reason: "a stored appAccountToken is not a UUID")
            }
            token = parsed
        }
        let value = RecordedTransaction(
            environment: AppStoreEnvironment(rawValue: try row.text(o)),
            transactionId: try row.text(o + 1),
            originalTransactionId: try row.text(o + 2),
            account: try row.optionalText(o + 3).map(account),
            bundleId: try row.text(o + 4),
            productId: try row.text(o + 5),
            productType: ProductType(rawValue: try row.text(o + 6)),
            subscriptionGroup: try row.text(o + 8),
            quantity: try row.int(o + 9),
            purchaseDate: Date(ledgerMilliseconds: try row.integer(o + 10)),
            originalPurchaseDate: try row.optionalDate(o + 11),
            expiresDate: try row.optionalDate(o + 12),
            revocationDate: try row.optionalDate(o + 13),
            revocationReason: try row.optionalInteger(o + 14).map { Int($0) },
            isUpgraded: try row.bool(o + 15),
            webOrderLineItemId: try row.optionalText(o + 16),
            appAccountToken: token,
            observedAt: Date(ledgerMilliseconds: try row.integer(o + 18)),
            source: source,
            proofDigest: try row.optionalBytes(o + 20).map { bytes throws(LedgerError) in try ProofDigest(stored: bytes) },
            money: try decodeMoney(row, at: o + 22)
        )
        return TransactionRow(value: value, hasAppleMetadata: try row.bool(o + 7))
    }
}

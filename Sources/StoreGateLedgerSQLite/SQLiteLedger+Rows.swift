import Foundation
import StoreGateCore
import StoreGateLedger

/// Loading and storing the ledger's rows in SQLite.
extension SQLiteLedger {
    static let transactionColumns = """
        environment, transaction_id, original_transaction_id, account_id, bundle_id, product_id, product_type, \
        has_apple_metadata, subscription_group, quantity, purchase_date, original_purchase_date, expires_date, \
        revocation_date, revocation_reason, is_upgraded, web_order_line_item_id, app_account_token, observed_at, \
        source, proof_digest, money_known, price, currency, storefront, offer_type, offer_identifier, offer_period, \
        offer_discount_type, transaction_reason
        """

    // The statements built from `transactionColumns`, built once: statements are cached by
    // their text, and building and hashing that text on every call showed in profiles.
    static let selectOfFamily =
        "SELECT \(transactionColumns) FROM ledger_transactions WHERE environment = ? AND original_transaction_id = ?"
    static let renewalColumns = """
        environment, original_transaction_id, product_id, auto_renew_product_id, will_auto_renew, \
        expiration_intent, is_in_billing_retry_period, grace_period_expires_date, renewal_date, observed_at
        """
    static let selectRenewal = "SELECT \(renewalColumns) FROM ledger_renewals WHERE environment = ? AND original_transaction_id = ?"
    static let selectByKey = "SELECT \(transactionColumns) FROM ledger_transactions WHERE environment = ? AND transaction_id = ?"

    /// An account's transactions. A transaction's account is always its family's (the
    /// integrity check counts any mismatch); the second filter keeps it so here.
    static let selectByAccount = ofAccount(transactionColumns, "ledger_transactions") + " AND x.account_id = ?1"
    /// An account's renewal infos.
    static let selectRenewalsOfAccount = ofAccount(renewalColumns, "ledger_renewals")
    /// An account's notifications, as ``RecordedNotification`` reads them.
    static let selectNotificationsOfAccount = ofAccount(
        "notification_uuid, notification_type, subtype, signed_date, environment, transaction_id, original_transaction_id",
        "ledger_notifications"
    )

    /// The rows of `table` in the families of account `?1` (since migration 7 an account's
    /// transactions are found through their families): the families by their account index,
    /// then each family's rows by their key; `CROSS JOIN` keeps the families first. (An `IN (SELECT …)`
    /// filter instead builds a temporary index of the families at every execution — a third
    /// of an entitlement read's instructions. The bundled SQLite has no STAT4, so the join's
    /// plan does not depend on the bound account and the statement is prepared once.)
    private static func ofAccount(_ columns: String, _ table: String) -> String {
        let qualified = columns.split(separator: ",").map { "x.\($0.trimmingCharacters(in: .whitespaces))" }
        return """
            SELECT \(qualified.joined(separator: ", ")) FROM ledger_families f CROSS JOIN \(table) x
                ON x.environment = f.environment AND x.original_transaction_id = f.original_transaction_id
            WHERE f.account_id = ?1
            """
    }

    static let insertTransaction =
        "INSERT INTO ledger_transactions (\(transactionColumns), recorded_at, updated_at) VALUES (\(Array(repeating: "?", count: 32).joined(separator: ", ")))"

    // MARK: Loading

    static func loadState(_ connection: SQLiteConnection, families: [FamilyKey], transactions: [TransactionKey]) throws(LedgerError) -> PlanningState {
        var state = PlanningState()
        for key in families {
            try connection.query(
                "SELECT account_id, next_transition_at FROM ledger_families WHERE environment = ? AND original_transaction_id = ?",
                [.text(key.environment.rawValue), .text(key.originalTransactionId)]
            ) { row throws(LedgerError) in
                state.families[key] = FamilyRow(
                    key: key, account: row.optionalText(0).map(account), nextTransitionAt: row.optionalInteger(1).map(Date.init(ledgerMilliseconds:))
                )
            }
            let familyValues: [SQLiteValue] = [.text(key.environment.rawValue), .text(key.originalTransactionId)]
            // A renewal-only notification stores renewal info before its family exists: the
            // rollups need it as soon as the family's first transaction comes.
            try connection.query(selectRenewal, familyValues) { row throws(LedgerError) in
                let renewal = decodeRenewal(row)
                state.renewals[renewal.key] = renewal
            }
            guard state.families[key] != nil else { continue }
            // Every transaction of the family: unowned ones may be claimed, and the events
            // compare the family before and after.
            try connection.query(selectOfFamily, familyValues) { row throws(LedgerError) in
                let transaction = try decodeTransaction(row)
                state.transactions[transaction.key] = transaction
            }
        }
        for row in try loadTransactions(connection, transactions) {
            state.transactions[row.key] = row
        }
        return state
    }

    static func loadTransactions(_ connection: SQLiteConnection, _ keys: [TransactionKey]) throws(LedgerError) -> [TransactionRow] {
        var rows: [TransactionRow] = []
        for key in keys {
            try connection.query(
                selectByKey,
                [.text(key.environment.rawValue), .text(key.transactionId)]
            ) { row throws(LedgerError) in
                rows.append(try decodeTransaction(row))
            }
        }
        return rows
    }

    /// Everything about one account, in one read transaction.
    static func loadAccount(_ connection: SQLiteConnection, _ account: AccountID) throws(LedgerError) -> AccountRecords {
        var records = AccountRecords()
        let id = SQLiteValue.text(account.rawValue)
        try connection.query(selectByAccount, [id]) { row throws(LedgerError) in
            records.transactions.append(try decodeTransaction(row).value)
        }
        // Balances first: an account whose purchases all moved to another one keeps the
        // counters of what it consumed.
        try connection.query("SELECT product_id, purchased, refunded, consumed FROM ledger_balances WHERE account_id = ?", [id]) { row throws(LedgerError) in
            records.balances.append(ConsumableBalance(
                productId: row.text(0), purchased: Int(row.integer(1)), refunded: Int(row.integer(2)), consumed: Int(row.integer(3))
            ))
        }
        guard !records.transactions.isEmpty else { return records }
        // Renewal infos only matter to auto-renewable subscriptions.
        if records.transactions.contains(where: { $0.productType == .autoRenewable }) {
            try connection.query(selectRenewalsOfAccount, [id]) { row throws(LedgerError) in
                let renewal = decodeRenewal(row)
                records.renewals[renewal.key] = renewal
            }
        }
        try connection.query(selectNotificationsOfAccount, [id]) { row throws(LedgerError) in
            records.notifications.append(RecordedNotification(
                notificationUUID: row.text(0),
                notificationType: row.text(1),
                subtype: row.optionalText(2),
                signedDate: Date(ledgerMilliseconds: row.integer(3)),
                environment: AppStoreEnvironment(rawValue: row.text(4)),
                transactionId: row.optionalText(5),
                originalTransactionId: row.optionalText(6)
            ))
        }
        return records
    }

    // MARK: Storing

    static func apply(_ plan: LedgerWritePlan, at date: Date, _ connection: SQLiteConnection) throws(LedgerError) {
        let now = SQLiteValue.integer(date.ledgerMilliseconds)
        if let proof = plan.proof {
            try connection.run(
                "INSERT INTO ledger_proofs (digest, kind, environment, key_id, sealed, received_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (digest) DO NOTHING",
                [
                    .blob(proof.digest.bytes), .text(proof.kind.rawValue), .text(proof.environment.rawValue),
                    .optional(proof.sealed?.keyID), proof.sealed.map { .blob($0.combined) } ?? .null,
                    .integer(proof.receivedAt.ledgerMilliseconds),
                ]
            )
        }
        if let notification = plan.notification {
            let summary = notification.summary
            try connection.run("""
                INSERT INTO ledger_notifications (notification_uuid, environment, notification_type, subtype, signed_date,
                    transaction_id, original_transaction_id, proof_digest, received_at)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """, [
                    .text(summary.notificationUUID), .text(summary.environment.rawValue), .text(summary.notificationType),
                    .optional(summary.subtype), .integer(summary.signedDate.ledgerMilliseconds), .optional(summary.transactionId),
                    .optional(summary.originalTransactionId), .blob(notification.proofDigest.bytes), now,
                ]
            )
        }
        for family in plan.familyInserts {
            try connection.run(
                "INSERT INTO ledger_families (environment, original_transaction_id, account_id, next_transition_at) VALUES (?, ?, ?, ?)",
                [
                    .text(family.key.environment.rawValue), .text(family.key.originalTransactionId), .optional(family.account?.rawValue),
                    .optional(family.nextTransitionAt?.ledgerMilliseconds),
                ]
            )
        }
        for family in plan.familyClaims {
            try connection.run(
                "UPDATE ledger_families SET account_id = ? WHERE environment = ? AND original_transaction_id = ? AND account_id IS NULL",
                [.optional(family.account?.rawValue), .text(family.key.environment.rawValue), .text(family.key.originalTransactionId)]
            )
        }
        for transfer in plan.transfers {
            let changed = try connection.run(
                "UPDATE ledger_families SET account_id = ? WHERE environment = ? AND original_transaction_id = ? AND account_id = ?",
                [.text(transfer.to.rawValue), .text(transfer.key.environment.rawValue), .text(transfer.key.originalTransactionId), .text(transfer.from.rawValue)]
            )
            // The plan was made from rows read in this transaction: anything else is a bug.
            guard changed == 1 else { throw LedgerError(.storage, reason: "a moved purchase family was not owned by the account it left") }
        }
        try setNextTransitions(plan.nextTransitions, connection)
        for row in plan.transactionInserts {
            try connection.run(
                insertTransaction,
                transactionValues(row) + [now, now]
            )
        }
        for row in plan.transactionUpdates {
            let value = row.value
            try connection.run("""
                UPDATE ledger_transactions SET account_id = ?, product_type = ?, has_apple_metadata = ?, subscription_group = ?,
                    original_purchase_date = ?, expires_date = ?, revocation_date = ?, revocation_reason = ?, is_upgraded = ?,
                    web_order_line_item_id = ?, app_account_token = ?, observed_at = ?, source = ?, proof_digest = ?, updated_at = ?,
                    money_known = ?, price = ?, currency = ?, storefront = ?, offer_type = ?, offer_identifier = ?, offer_period = ?,
                    offer_discount_type = ?, transaction_reason = ?
                WHERE environment = ? AND transaction_id = ?
                """, [
                    .optional(value.account?.rawValue), .text(value.productType.rawValue), .bool(row.hasAppleMetadata),
                    .text(value.subscriptionGroup), .optional(value.originalPurchaseDate?.ledgerMilliseconds),
                    .optional(value.expiresDate?.ledgerMilliseconds), .optional(value.revocationDate?.ledgerMilliseconds),
                    .optional(value.revocationReason), .bool(value.isUpgraded), .optional(value.webOrderLineItemId),
                    .optional(value.appAccountToken?.uuidString), .integer(value.observedAt.ledgerMilliseconds),
                    .text(value.source.rawValue), value.proofDigest.map { .blob($0.bytes) } ?? .null, now,
                ] + moneyValues(value.money) + [
                    .text(value.environment.rawValue), .text(value.transactionId),
                ]
            )
        }
        for renewal in plan.renewals {
            try connection.run("""
                INSERT INTO ledger_renewals (environment, original_transaction_id, product_id, auto_renew_product_id, will_auto_renew,
                    expiration_intent, is_in_billing_retry_period, grace_period_expires_date, renewal_date, observed_at, tiebreak)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT (environment, original_transaction_id) DO UPDATE SET
                    product_id = excluded.product_id, auto_renew_product_id = excluded.auto_renew_product_id,
                    will_auto_renew = excluded.will_auto_renew, expiration_intent = excluded.expiration_intent,
                    is_in_billing_retry_period = excluded.is_in_billing_retry_period,
                    grace_period_expires_date = excluded.grace_period_expires_date, renewal_date = excluded.renewal_date,
                    observed_at = excluded.observed_at, tiebreak = excluded.tiebreak
                WHERE (excluded.observed_at, excluded.tiebreak) > (ledger_renewals.observed_at, ledger_renewals.tiebreak)
                """, [
                    .text(renewal.key.environment.rawValue), .text(renewal.key.originalTransactionId), .text(renewal.productId),
                    .optional(renewal.autoRenewProductId), .bool(renewal.willAutoRenew), .optional(renewal.expirationIntent),
                    .bool(renewal.isInBillingRetryPeriod), .optional(renewal.gracePeriodExpiresDate?.ledgerMilliseconds),
                    .optional(renewal.renewalDate?.ledgerMilliseconds), .integer(renewal.observedAt.ledgerMilliseconds),
                    .text(renewal.tiebreak),
                ]
            )
        }
        if plan.queuesRollupChanges {
            if !plan.rollupDeltas.isEmpty { try queueRollupChanges(plan.queuedRollupDeltas, connection) }
        } else {
            try applyRollups(plan.rollupDeltas, connection, daySums: plan.addsRollupDays)
        }
        // CHECK constraints see the proposed row before ON CONFLICT, so a negative delta (a
        // refund) stays out of VALUES; it only ever meets an existing row.
        for delta in plan.balanceDeltas {
            try connection.run("""
                INSERT INTO ledger_balances (account_id, product_id, purchased, refunded, consumed)
                VALUES (?1, ?2, MAX(?3, 0), MAX(?4, 0), 0)
                ON CONFLICT (account_id, product_id) DO UPDATE SET
                    purchased = ledger_balances.purchased + ?3,
                    refunded = ledger_balances.refunded + ?4
                """, [
                    .text(delta.key.account.rawValue), .text(delta.key.productId),
                    .integer(Int64(delta.purchased)), .integer(Int64(delta.refunded)),
                ]
            )
        }
        for transfer in plan.transfers { try storeTransfer(transfer, connection) }
        var events = plan.events
        if !events.isEmpty {
            // The counters as stored now, read back by key (the page is in the cache). Not with
            // the upsert's RETURNING: SQLite builds an ephemeral table for it, which cost more
            // than this read.
            try events.settleBalances { key throws(LedgerError) in try balance(connection, key) }
            try appendEvents(events, connection)
        }
    }

    /// Stores the families' next time-driven transitions (``SubscriptionClock``).
    static func setNextTransitions(_ transitions: [NextTransition], _ connection: SQLiteConnection) throws(LedgerError) {
        for transition in transitions {
            try connection.run(
                "UPDATE ledger_families SET next_transition_at = ? WHERE environment = ? AND original_transaction_id = ?",
                [.optional(transition.at?.ledgerMilliseconds), .text(transition.key.environment.rawValue), .text(transition.key.originalTransactionId)]
            )
        }
    }

    /// The families whose next time-driven transition is due at `date`, earliest first.
    static func dueFamilies(_ connection: SQLiteConnection, at date: Date, limit: Int) throws(LedgerError) -> [FamilyKey] {
        var keys: [FamilyKey] = []
        try connection.query(
            """
            SELECT environment, original_transaction_id FROM ledger_families
            WHERE next_transition_at <= ? ORDER BY next_transition_at, environment, original_transaction_id LIMIT ?
            """,
            [.integer(date.ledgerMilliseconds), .integer(Int64(limit))]
        ) { row throws(LedgerError) in
            keys.append(FamilyKey(environment: AppStoreEnvironment(rawValue: row.text(0)), originalTransactionId: row.text(1)))
        }
        return keys
    }

    /// Appends events to the outbox. Each gets the largest sequence stored plus one, so
    /// sequences increase in commit order (one writer at a time); the newest event is never
    /// deleted (migration 7's trigger), so none is reused.
    static func appendEvents(_ events: [LedgerEvent], _ connection: SQLiteConnection) throws(LedgerError) {
        for event in events {
            try connection.run(
                "INSERT INTO ledger_events (id, account_id, type, recorded_at, payload) VALUES (?, ?, ?, ?, ?)",
                [.text(event.id), .text(event.account.rawValue), .text(event.type.rawValue), .integer(event.recordedAt.ledgerMilliseconds), .blob(event.storedJSON)]
            )
        }
        SQLiteTimelineIndex.appended(events.count, connection)
    }

    static func balance(_ connection: SQLiteConnection, _ key: BalanceKey) throws(LedgerError) -> ConsumableBalance {
        var balance = ConsumableBalance(productId: key.productId, purchased: 0, refunded: 0, consumed: 0)
        try connection.query(
            "SELECT purchased, refunded, consumed FROM ledger_balances WHERE account_id = ? AND product_id = ?",
            [.text(key.account.rawValue), .text(key.productId)]
        ) { row throws(LedgerError) in
            balance = ConsumableBalance(productId: key.productId, purchased: Int(row.integer(0)), refunded: Int(row.integer(1)), consumed: Int(row.integer(2)))
        }
        return balance
    }

    static func loadEvents(_ connection: SQLiteConnection, after sequence: Int64, limit: Int) throws(LedgerError) -> [LedgerEvent] {
        var events: [LedgerEvent] = []
        try connection.query(
            "SELECT sequence, payload FROM ledger_events WHERE sequence > ? ORDER BY sequence LIMIT ?",
            [.integer(sequence), .integer(Int64(limit))]
        ) { row throws(LedgerError) in
            events.append(try LedgerEvent(stored: row.blob(1), sequence: row.integer(0)))
        }
        return events
    }

    // MARK: Browsing

    /// Transactions an identifier names: one probe per environment on the unique and family
    /// indexes, then the token and web-order indexes.
    static func search(_ connection: SQLiteConnection, term: String, limit: Int) throws(LedgerError) -> [RecordedTransaction] {
        var found: [TransactionKey: RecordedTransaction] = [:]
        let placeholders = BrowsingQuery.environments.map { _ in "?" }.joined(separator: ", ")
        let environments = BrowsingQuery.environments.map { SQLiteValue.text($0.rawValue) }
        var clauses = [
            "environment IN (\(placeholders)) AND transaction_id = ?",
            "environment IN (\(placeholders)) AND original_transaction_id = ?",
            "web_order_line_item_id = ?",
        ]
        var bindings: [[SQLiteValue]] = [environments + [.text(term)], environments + [.text(term)], [.text(term)]]
        if let token = BrowsingQuery.token(term) {
            clauses.append("app_account_token = ?")
            bindings.append([.text(token)])
        }
        for (clause, values) in zip(clauses, bindings) {
            try connection.query(
                "SELECT \(transactionColumns) FROM ledger_transactions WHERE \(clause) ORDER BY purchase_date DESC LIMIT ?",
                values + [.integer(Int64(limit))]
            ) { row throws(LedgerError) in
                let transaction = try decodeTransaction(row)
                found[transaction.key] = transaction.value
            }
        }
        return BrowsingQuery.ordered(Array(found.values), limit: limit)
    }

    static func consume(
        _ connection: SQLiteConnection, productId: String, quantity: Int, key: String, account: AccountID, at date: Date, recordedAt: Date
    ) throws(LedgerError) -> ConsumptionReceipt {
        var earlier: ConsumptionRow?
        try connection.query(
            "SELECT product_id, quantity, consumed_at, remaining FROM ledger_consumptions WHERE account_id = ? AND idempotency_key = ?",
            [.text(account.rawValue), .text(key)]
        ) { row throws(LedgerError) in
            earlier = ConsumptionRow(
                account: account, idempotencyKey: key, productId: row.text(0), quantity: Int(row.integer(1)),
                consumedAt: Date(ledgerMilliseconds: row.integer(2)), remaining: Int(row.integer(3))
            )
        }
        if let earlier {
            guard earlier.productId == productId, earlier.quantity == quantity else {
                throw LedgerError(.idempotencyKeyReused, reason: "the idempotency key was used for another product or quantity", productId: productId)
            }
            return earlier.receipt(isReplay: true)
        }
        var after: ConsumableBalance?
        try connection.query(
            "UPDATE ledger_balances SET consumed = consumed + ?1 WHERE account_id = ?2 AND product_id = ?3 AND purchased - consumed >= ?1 RETURNING purchased, refunded, consumed",
            [.integer(Int64(quantity)), .text(account.rawValue), .text(productId)]
        ) { row throws(LedgerError) in
            after = ConsumableBalance(productId: productId, purchased: Int(row.integer(0)), refunded: Int(row.integer(1)), consumed: Int(row.integer(2)))
        }
        guard let after else {
            var available = 0
            try connection.query(
                "SELECT MAX(purchased - consumed, 0) FROM ledger_balances WHERE account_id = ? AND product_id = ?",
                [.text(account.rawValue), .text(productId)]
            ) { row throws(LedgerError) in
                available = Int(row.integer(0))
            }
            throw LedgerError(.insufficientBalance, reason: "the balance is lower than the quantity", productId: productId, available: available)
        }
        let row = ConsumptionRow(
            account: account, idempotencyKey: key, productId: productId, quantity: quantity,
            consumedAt: date.ledgerNormalized, remaining: after.available
        )
        try connection.run(
            "INSERT INTO ledger_consumptions (account_id, idempotency_key, product_id, quantity, consumed_at, remaining) VALUES (?, ?, ?, ?, ?, ?)",
            [.text(account.rawValue), .text(key), .text(productId), .integer(Int64(quantity)), .integer(row.consumedAt.ledgerMilliseconds), .integer(Int64(row.remaining))]
        )
        let receipt = row.receipt(isReplay: false)
        try appendEvents([EventPlanner.consumption(receipt, balance: after, recordedAt: recordedAt)], connection)
        return receipt
    }

    static func invariants(_ connection: SQLiteConnection) throws(LedgerError) -> LedgerInvariants {
        var figures = LedgerInvariants()
        try connection.query("""
            SELECT COUNT(*) FROM ledger_transactions t LEFT JOIN ledger_families f
              ON f.environment = t.environment AND f.original_transaction_id = t.original_transaction_id
            WHERE f.original_transaction_id IS NULL OR t.account_id IS NOT f.account_id
            """) { row throws(LedgerError) in
            figures.ownershipMismatches = Int(row.integer(0))
        }
        try connection.query("""
            SELECT account_id, product_id,
                   SUM(CASE WHEN revocation_date IS NULL THEN quantity ELSE 0 END),
                   SUM(CASE WHEN revocation_date IS NULL THEN 0 ELSE quantity END)
            FROM ledger_transactions WHERE account_id IS NOT NULL AND product_type = ? GROUP BY account_id, product_id
            """, [.text(ProductType.consumable.rawValue)]) { row throws(LedgerError) in
            let key = BalanceKey(account: account(row.text(0)), productId: row.text(1))
            figures.expected[key] = (Int(row.integer(2)), Int(row.integer(3)))
        }
        try connection.query("SELECT account_id, product_id, purchased, refunded, consumed FROM ledger_balances") { row throws(LedgerError) in
            let key = BalanceKey(account: account(row.text(0)), productId: row.text(1))
            figures.stored[key] = ConsumableBalance(productId: key.productId, purchased: Int(row.integer(2)), refunded: Int(row.integer(3)), consumed: Int(row.integer(4)))
        }
        try connection.query("SELECT account_id, product_id, SUM(quantity) FROM ledger_consumptions GROUP BY account_id, product_id") { row throws(LedgerError) in
            figures.consumed[BalanceKey(account: account(row.text(0)), productId: row.text(1))] = Int(row.integer(2))
        }
        // Consumed units that left with a purchase moved to another account (schema 12).
        try connection.query(
            "SELECT from_account, to_account, product_id, consumed_moved, refunded_units FROM ledger_transfers WHERE product_id IS NOT NULL"
        ) { row throws(LedgerError) in
            figures.addTransfer(
                from: account(row.text(0)), to: account(row.text(1)), productId: row.text(2), consumedMoved: Int(row.integer(3)),
                refundedUnits: Int(row.integer(4))
            )
        }
        return figures
    }

    // MARK: Decoding

    /// An account id read back: it was validated when it was written.
    private static func account(_ text: String) -> AccountID {
        AccountID(stored: text)
    }

    private static func transactionValues(_ row: TransactionRow) -> [SQLiteValue] {
        let value = row.value
        return [
            .text(value.environment.rawValue), .text(value.transactionId), .text(value.originalTransactionId),
            .optional(value.account?.rawValue), .text(value.bundleId), .text(value.productId), .text(value.productType.rawValue),
            .bool(row.hasAppleMetadata), .text(value.subscriptionGroup), .integer(Int64(value.quantity)),
            .integer(value.purchaseDate.ledgerMilliseconds), .optional(value.originalPurchaseDate?.ledgerMilliseconds),
            .optional(value.expiresDate?.ledgerMilliseconds), .optional(value.revocationDate?.ledgerMilliseconds),
            .optional(value.revocationReason), .bool(value.isUpgraded), .optional(value.webOrderLineItemId),
            .optional(value.appAccountToken?.uuidString), .integer(value.observedAt.ledgerMilliseconds),
            .text(value.source.rawValue), value.proofDigest.map { .blob($0.bytes) } ?? .null,
        ] + moneyValues(value.money)
    }

    /// A page of transactions after `cursor`, in the unique key's order.
    static func scan(_ connection: SQLiteConnection, after cursor: TransactionCursor?, limit: Int) throws(LedgerError) -> [RecordedTransaction] {
        var page: [RecordedTransaction] = []
        try connection.query(selectScan, [
            .text(cursor?.environment.rawValue ?? ""), .text(cursor?.transactionId ?? ""), .integer(Int64(limit)),
        ]) { row throws(LedgerError) in
            page.append(try decodeTransaction(row).value)
        }
        return page
    }

    /// Sets the money facts of one transaction while they are unknown; the rows changed.
    static func fillMoney(
        _ money: MoneyFacts, transactionId: String, environment: AppStoreEnvironment, now: Int64, _ connection: SQLiteConnection
    ) throws(LedgerError) -> Int {
        try connection.run("""
            UPDATE ledger_transactions SET money_known = ?, price = ?, currency = ?, storefront = ?, offer_type = ?,
                offer_identifier = ?, offer_period = ?, offer_discount_type = ?, transaction_reason = ?, updated_at = ?
            WHERE environment = ? AND transaction_id = ? AND money_known = 0
            """, moneyValues(money) + [.integer(now), .text(environment.rawValue), .text(transactionId)])
    }

    /// The money columns (`money_known` first) of `money`.
    private static func moneyValues(_ money: MoneyFacts?) -> [SQLiteValue] {
        [
            .bool(money != nil), .optional(money?.price), .optional(money?.currency), .optional(money?.storefront),
            .optional(money?.offerType), .optional(money?.offerIdentifier), .optional(money?.offerPeriod),
            .optional(money?.offerDiscountType), .optional(money?.transactionReason),
        ]
    }

    /// The money facts in the columns from `column` (`money_known` first).
    static func decodeMoney(_ row: SQLiteRow, at column: Int32) -> MoneyFacts? {
        guard row.integer(column) != 0 else { return nil }
        return MoneyFacts(
            price: row.optionalInteger(column + 1), currency: row.optionalText(column + 2), storefront: row.optionalText(column + 3),
            offerType: row.optionalInteger(column + 4).map { Int($0) }, offerIdentifier: row.optionalText(column + 5),
            offerPeriod: row.optionalText(column + 6), offerDiscountType: row.optionalText(column + 7),
            transactionReason: row.optionalText(column + 8)
        )
    }

    /// A renewal info from ``renewalColumns``.
    static func decodeRenewal(_ row: SQLiteRow) -> RenewalRow {
        RenewalRow(
            key: FamilyKey(environment: AppStoreEnvironment(rawValue: row.text(0)), originalTransactionId: row.text(1)),
            productId: row.text(2),
            autoRenewProductId: row.optionalText(3),
            willAutoRenew: row.integer(4) != 0,
            expirationIntent: row.optionalInteger(5).map { Int($0) },
            isInBillingRetryPeriod: row.integer(6) != 0,
            gracePeriodExpiresDate: row.optionalInteger(7).map(Date.init(ledgerMilliseconds:)),
            renewalDate: row.optionalInteger(8).map(Date.init(ledgerMilliseconds:)),
            observedAt: Date(ledgerMilliseconds: row.integer(9))
        )
    }

    static func decodeTransaction(_ row: SQLiteRow) throws(LedgerError) -> TransactionRow {
        guard let source = ProofKind(rawValue: row.text(19)) else {
            throw LedgerError(.storage, reason: "a stored transaction names an unknown proof kind")
        }
        var token: UUID?
        if let text = row.optionalText(17) {
            guard let parsed = UUID(uuidString: text) else {
                throw LedgerError(.storage, reason: "a stored appAccountToken is not a UUID")
            }
            token = parsed
        }
        let value = RecordedTransaction(
            environment: AppStoreEnvironment(rawValue: row.text(0)),
            transactionId: row.text(1),
            originalTransactionId: row.text(2),
            account: row.optionalText(3).map(account),
            bundleId: row.text(4),
            productId: row.text(5),
            productType: ProductType(rawValue: row.text(6)),
            subscriptionGroup: row.text(8),
            quantity: Int(row.integer(9)),
            purchaseDate: Date(ledgerMilliseconds: row.integer(10)),
            originalPurchaseDate: row.optionalInteger(11).map(Date.init(ledgerMilliseconds:)),
            expiresDate: row.optionalInteger(12).map(Date.init(ledgerMilliseconds:)),
            revocationDate: row.optionalInteger(13).map(Date.init(ledgerMilliseconds:)),
            revocationReason: row.optionalInteger(14).map { Int($0) },
            isUpgraded: row.integer(15) != 0,
            webOrderLineItemId: row.optionalText(16),
            appAccountToken: token,
            observedAt: Date(ledgerMilliseconds: row.integer(18)),
            source: source,
            proofDigest: try row.optionalBlob(20).map { bytes throws(LedgerError) in try ProofDigest(stored: bytes) },
            money: decodeMoney(row, at: 21)
        )
        return TransactionRow(value: value, hasAppleMetadata: row.integer(7) != 0)
    }
}

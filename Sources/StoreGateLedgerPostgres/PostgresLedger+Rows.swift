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

    static func query(_ sql: String, _ values: [PostgresValue]) -> PostgresQuery {
        var bindings = PostgresBindings(capacity: values.count)
        for value in values {
            switch value {
            case .null: bindings.appendNull()
            case .integer(let number): bindings.append(number)
            case .text(let text): bindings.append(text)
            case .bool(let flag): bindings.append(flag)
            case .bytes(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            }
        }
        return PostgresQuery(unsafeSQL: sql, binds: bindings)
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

    // MARK: Loading

    static func loadState(
        _ connection: PostgresConnection, families: [FamilyKey], transactions: [TransactionKey], logger: Logger
    ) async throws -> PlanningState {
        var state = PlanningState()
        for key in families {
            let rows = try await Self.rows(
                connection,
                "SELECT account_id FROM ledger_families WHERE environment = $1 AND original_transaction_id = $2 FOR UPDATE",
                [.text(key.environment.rawValue), .text(key.originalTransactionId)], logger: logger
            )
            guard let row = rows.first else { continue }
            let family = FamilyRow(key: key, account: try row.optionalText(0).map(account))
            state.families[key] = family
            if family.account == nil {
                for row in try await Self.rows(
                    connection,
                    "SELECT \(transactionColumns) FROM ledger_transactions WHERE environment = $1 AND original_transaction_id = $2 AND account_id IS NULL ORDER BY transaction_id FOR UPDATE",
                    [.text(key.environment.rawValue), .text(key.originalTransactionId)], logger: logger
                ) {
                    let transaction = try decodeTransaction(row)
                    state.transactions[transaction.key] = transaction
                }
            }
        }
        for row in try await loadTransactions(connection, transactions, lock: true, logger: logger) {
            state.transactions[row.key] = row
        }
        return state
    }

    static func loadTransactions(_ connection: PostgresConnection, _ keys: [TransactionKey], lock: Bool, logger: Logger) async throws -> [TransactionRow] {
        var result: [TransactionRow] = []
        for key in keys {
            for row in try await Self.rows(
                connection,
                "SELECT \(transactionColumns) FROM ledger_transactions WHERE environment = $1 AND transaction_id = $2\(lock ? " FOR UPDATE" : "")",
                [.text(key.environment.rawValue), .text(key.transactionId)], logger: logger
            ) {
                result.append(try decodeTransaction(row))
            }
        }
        return result
    }

    static func loadAccount(_ connection: PostgresConnection, _ account: AccountID, logger: Logger) async throws -> AccountRecords {
        var records = AccountRecords()
        let id = PostgresValue.text(account.rawValue)
        for row in try await rows(connection, "SELECT \(transactionColumns) FROM ledger_transactions WHERE account_id = $1", [id], logger: logger) {
            records.transactions.append(try decodeTransaction(row).value)
        }
        guard !records.transactions.isEmpty else { return records }
        for row in try await rows(connection, """
            SELECT r.environment, r.original_transaction_id, r.product_id, r.auto_renew_product_id, r.will_auto_renew,
                   r.expiration_intent, r.is_in_billing_retry_period, r.grace_period_expires_date, r.renewal_date, r.observed_at
            FROM ledger_renewals r JOIN ledger_families f
              ON f.environment = r.environment AND f.original_transaction_id = r.original_transaction_id
            WHERE f.account_id = $1
            """, [id], logger: logger
        ) {
            let key = FamilyKey(environment: Environment(rawValue: try row.text(0)), originalTransactionId: try row.text(1))
            records.renewals[key] = RenewalRow(
                key: key,
                productId: try row.text(2),
                autoRenewProductId: try row.optionalText(3),
                willAutoRenew: try row.bool(4),
                expirationIntent: try row.optionalInteger(5).map { Int($0) },
                isInBillingRetryPeriod: try row.bool(6),
                gracePeriodExpiresDate: try row.optionalDate(7),
                renewalDate: try row.optionalDate(8),
                observedAt: Date(ledgerMilliseconds: try row.integer(9))
            )
        }
        for row in try await rows(connection, """
            SELECT n.notification_uuid, n.notification_type, n.subtype, n.signed_date, n.environment, n.transaction_id,
                   n.original_transaction_id
            FROM ledger_notifications n JOIN ledger_families f
              ON f.environment = n.environment AND f.original_transaction_id = n.original_transaction_id
            WHERE f.account_id = $1
            """, [id], logger: logger
        ) {
            records.notifications.append(NotificationSummary(
                notificationUUID: try row.text(0),
                notificationType: try row.text(1),
                subtype: try row.optionalText(2),
                signedDate: Date(ledgerMilliseconds: try row.integer(3)),
                environment: Environment(rawValue: try row.text(4)),
                transactionId: try row.optionalText(5),
                originalTransactionId: try row.optionalText(6)
            ))
        }
        for row in try await rows(connection, "SELECT product_id, purchased, refunded, consumed FROM ledger_balances WHERE account_id = $1", [id], logger: logger) {
            records.balances.append(ConsumableBalance(productId: try row.text(0), purchased: try row.int(1), refunded: try row.int(2), consumed: try row.int(3)))
        }
        return records
    }

    // MARK: Storing

    static func apply(_ plan: LedgerWritePlan, _ connection: PostgresConnection, logger: Logger) async throws {
        let now = PostgresValue.integer(Date().ledgerMilliseconds)
        if let proof = plan.proof {
            try await run(connection, """
                INSERT INTO ledger_proofs (digest, kind, environment, key_id, sealed, received_at) VALUES ($1, $2, $3, $4, $5, $6)
                ON CONFLICT (digest) DO NOTHING
                """, [
                    .bytes(proof.digest.bytes), .text(proof.kind.rawValue), .text(proof.environment.rawValue),
                    .optional(proof.sealed?.keyID), proof.sealed.map { .bytes($0.combined) } ?? .null,
                    .integer(proof.receivedAt.ledgerMilliseconds),
                ], logger: logger)
        }
        if let notification = plan.notification {
            let summary = notification.summary
            try await run(connection, """
                INSERT INTO ledger_notifications (notification_uuid, environment, notification_type, subtype, signed_date,
                    transaction_id, original_transaction_id, proof_digest, received_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                """, [
                    .text(summary.notificationUUID), .text(summary.environment.rawValue), .text(summary.notificationType),
                    .optional(summary.subtype), .integer(summary.signedDate.ledgerMilliseconds), .optional(summary.transactionId),
                    .optional(summary.originalTransactionId), .bytes(notification.proofDigest.bytes), now,
                ], logger: logger)
        }
        for family in plan.familyInserts {
            try await run(connection,
                "INSERT INTO ledger_families (environment, original_transaction_id, account_id) VALUES ($1, $2, $3)",
                [.text(family.key.environment.rawValue), .text(family.key.originalTransactionId), .optional(family.account?.rawValue)],
                logger: logger)
        }
        for family in plan.familyClaims {
            try await run(connection,
                "UPDATE ledger_families SET account_id = $1 WHERE environment = $2 AND original_transaction_id = $3 AND account_id IS NULL",
                [.optional(family.account?.rawValue), .text(family.key.environment.rawValue), .text(family.key.originalTransactionId)],
                logger: logger)
        }
        for row in plan.transactionInserts {
            try await run(connection, """
                INSERT INTO ledger_transactions (\(transactionColumns), recorded_at, updated_at)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)
                """, transactionValues(row) + [now, now], logger: logger)
        }
        for row in plan.transactionUpdates {
            let value = row.value
            try await run(connection, """
                UPDATE ledger_transactions SET account_id = $1, product_type = $2, has_apple_metadata = $3, subscription_group = $4,
                    original_purchase_date = $5, expires_date = $6, revocation_date = $7, revocation_reason = $8, is_upgraded = $9,
                    web_order_line_item_id = $10, app_account_token = $11, observed_at = $12, source = $13, proof_digest = $14,
                    updated_at = $15
                WHERE environment = $16 AND transaction_id = $17
                """, [
                    .optional(value.account?.rawValue), .text(value.productType.rawValue), .bool(row.hasAppleMetadata),
                    .text(value.subscriptionGroup), .optional(value.originalPurchaseDate?.ledgerMilliseconds),
                    .optional(value.expiresDate?.ledgerMilliseconds), .optional(value.revocationDate?.ledgerMilliseconds),
                    .optional(value.revocationReason), .bool(value.isUpgraded), .optional(value.webOrderLineItemId),
                    .optional(value.appAccountToken?.uuidString), .integer(value.observedAt.ledgerMilliseconds),
                    .text(value.source.rawValue), value.proofDigest.map { .bytes($0.bytes) } ?? .null, now,
                    .text(value.environment.rawValue), .text(value.transactionId),
                ], logger: logger)
        }
        for renewal in plan.renewals {
            try await run(connection, """
                INSERT INTO ledger_renewals (environment, original_transaction_id, product_id, auto_renew_product_id, will_auto_renew,
                    expiration_intent, is_in_billing_retry_period, grace_period_expires_date, renewal_date, observed_at, tiebreak)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
                ON CONFLICT (environment, original_transaction_id) DO UPDATE SET
                    product_id = excluded.product_id, auto_renew_product_id = excluded.auto_renew_product_id,
                    will_auto_renew = excluded.will_auto_renew, expiration_intent = excluded.expiration_intent,
                    is_in_billing_retry_period = excluded.is_in_billing_retry_period,
                    grace_period_expires_date = excluded.grace_period_expires_date, renewal_date = excluded.renewal_date,
                    observed_at = excluded.observed_at, tiebreak = excluded.tiebreak
                WHERE (excluded.observed_at, excluded.tiebreak COLLATE "C") > (ledger_renewals.observed_at, ledger_renewals.tiebreak COLLATE "C")
                """, [
                    .text(renewal.key.environment.rawValue), .text(renewal.key.originalTransactionId), .text(renewal.productId),
                    .optional(renewal.autoRenewProductId), .bool(renewal.willAutoRenew), .optional(renewal.expirationIntent),
                    .bool(renewal.isInBillingRetryPeriod), .optional(renewal.gracePeriodExpiresDate?.ledgerMilliseconds),
                    .optional(renewal.renewalDate?.ledgerMilliseconds), .integer(renewal.observedAt.ledgerMilliseconds),
                    .text(renewal.tiebreak),
                ], logger: logger)
        }
        // PostgreSQL checks CHECK constraints on the proposed row before ON CONFLICT, so a
        // negative delta (a refund) must not appear in VALUES; it only ever meets an existing row.
        for delta in plan.balanceDeltas {
            try await run(connection, """
                INSERT INTO ledger_balances (account_id, product_id, purchased, refunded, consumed)
                VALUES ($1, $2, GREATEST($3, 0), GREATEST($4, 0), 0)
                ON CONFLICT (account_id, product_id) DO UPDATE SET
                    purchased = ledger_balances.purchased + $3,
                    refunded = ledger_balances.refunded + $4
                """, [
                    .text(delta.key.account.rawValue), .text(delta.key.productId),
                    .integer(Int64(delta.purchased)), .integer(Int64(delta.refunded)),
                ], logger: logger)
        }
    }

    static func consume(
        _ connection: PostgresConnection, productId: String, quantity: Int, key: String, account: AccountID, at date: Date, logger: Logger
    ) async throws -> ConsumptionReceipt {
        let earlier = try await rows(
            connection,
            "SELECT product_id, quantity, consumed_at, remaining FROM ledger_consumptions WHERE account_id = $1 AND idempotency_key = $2",
            [.text(account.rawValue), .text(key)], logger: logger
        )
        if let row = earlier.first {
            let previous = ConsumptionRow(
                account: account, idempotencyKey: key, productId: try row.text(0), quantity: try row.int(1),
                consumedAt: Date(ledgerMilliseconds: try row.integer(2)), remaining: try row.int(3)
            )
            guard previous.productId == productId, previous.quantity == quantity else {
                throw LedgerError(.idempotencyKeyReused, reason: "the idempotency key was used for another product or quantity", productId: productId)
            }
            return previous.receipt(isReplay: true)
        }
        let updated = try await rows(
            connection,
            "UPDATE ledger_balances SET consumed = consumed + $1 WHERE account_id = $2 AND product_id = $3 AND purchased - consumed >= $1 RETURNING purchased - consumed",
            [.integer(Int64(quantity)), .text(account.rawValue), .text(productId)], logger: logger
        )
        guard let row = updated.first else {
            let current = try await rows(
                connection, "SELECT GREATEST(purchased - consumed, 0) FROM ledger_balances WHERE account_id = $1 AND product_id = $2",
                [.text(account.rawValue), .text(productId)], logger: logger
            )
            let available = try current.first?.int(0) ?? 0
            throw LedgerError(.insufficientBalance, reason: "the balance is lower than the quantity", productId: productId, available: available)
        }
        let consumption = ConsumptionRow(
            account: account, idempotencyKey: key, productId: productId, quantity: quantity,
            consumedAt: date.ledgerNormalized, remaining: max(0, try row.int(0))
        )
        try await run(connection,
            "INSERT INTO ledger_consumptions (account_id, idempotency_key, product_id, quantity, consumed_at, remaining) VALUES ($1, $2, $3, $4, $5, $6)",
            [.text(account.rawValue), .text(key), .text(productId), .integer(Int64(quantity)), .integer(consumption.consumedAt.ledgerMilliseconds), .integer(Int64(consumption.remaining))],
            logger: logger)
        return consumption.receipt(isReplay: false)
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
            figures.expected[BalanceKey(account: try account(row.text(0)), productId: try row.text(1))] = (try row.int(2), try row.int(3))
        }
        for row in try await rows(connection, "SELECT account_id, product_id, purchased, refunded, consumed FROM ledger_balances", logger: logger) {
            let key = BalanceKey(account: try account(row.text(0)), productId: try row.text(1))
            figures.stored[key] = ConsumableBalance(productId: key.productId, purchased: try row.int(2), refunded: try row.int(3), consumed: try row.int(4))
        }
        for row in try await rows(connection, "SELECT account_id, product_id, SUM(quantity)::BIGINT FROM ledger_consumptions GROUP BY account_id, product_id", logger: logger) {
            figures.consumed[BalanceKey(account: try account(row.text(0)), productId: try row.text(1))] = try row.int(2)
        }
        return figures
    }

    // MARK: Decoding

    private static func account(_ text: String) throws(LedgerError) -> AccountID {
        do { return try AccountID(text) } catch {
            throw LedgerError(.storage, reason: "a stored account id is not valid")
        }
    }

    private static func transactionValues(_ row: TransactionRow) -> [PostgresValue] {
        let value = row.value
        return [
            .text(value.environment.rawValue), .text(value.transactionId), .text(value.originalTransactionId),
            .optional(value.account?.rawValue), .text(value.bundleId), .text(value.productId), .text(value.productType.rawValue),
            .bool(row.hasAppleMetadata), .text(value.subscriptionGroup), .integer(Int64(value.quantity)),
            .integer(value.purchaseDate.ledgerMilliseconds), .optional(value.originalPurchaseDate?.ledgerMilliseconds),
            .optional(value.expiresDate?.ledgerMilliseconds), .optional(value.revocationDate?.ledgerMilliseconds),
            .optional(value.revocationReason), .bool(value.isUpgraded), .optional(value.webOrderLineItemId),
            .optional(value.appAccountToken?.uuidString), .integer(value.observedAt.ledgerMilliseconds),
            .text(value.source.rawValue), value.proofDigest.map { .bytes($0.bytes) } ?? .null,
        ]
    }

    private static func decodeTransaction(_ row: PostgresRandomAccessRow) throws -> TransactionRow {
        guard let source = ProofKind(rawValue: try row.text(19)) else {
            throw LedgerError(.storage, reason: "a stored transaction names an unknown proof kind")
        }
        var token: UUID?
        if let text = try row.optionalText(17) {
            guard let parsed = UUID(uuidString: text) else {
                throw LedgerError(.storage, reason: "a stored appAccountToken is not a UUID")
            }
            token = parsed
        }
        let value = RecordedTransaction(
            environment: Environment(rawValue: try row.text(0)),
            transactionId: try row.text(1),
            originalTransactionId: try row.text(2),
            account: try row.optionalText(3).map(account),
            bundleId: try row.text(4),
            productId: try row.text(5),
            productType: ProductType(rawValue: try row.text(6)),
            subscriptionGroup: try row.text(8),
            quantity: try row.int(9),
            purchaseDate: Date(ledgerMilliseconds: try row.integer(10)),
            originalPurchaseDate: try row.optionalDate(11),
            expiresDate: try row.optionalDate(12),
            revocationDate: try row.optionalDate(13),
            revocationReason: try row.optionalInteger(14).map { Int($0) },
            isUpgraded: try row.bool(15),
            webOrderLineItemId: try row.optionalText(16),
            appAccountToken: token,
            observedAt: Date(ledgerMilliseconds: try row.integer(18)),
            source: source,
            proofDigest: try row.optionalBytes(20).map { bytes throws(LedgerError) in try ProofDigest(stored: bytes) }
        )
        return TransactionRow(value: value, hasAppleMetadata: try row.bool(7))
    }
}

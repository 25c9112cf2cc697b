import Foundation
import Logging
import PostgresNIO
public import StoreGateCore
public import StoreGateLedger

/// The daily analytics rollups (schema 14, ``AnalyticsStore``): `ledger_apply_v7` queues each
/// recording's changes (schema 17, ``RollupChanges``), a fold adds them in batches, reads fold
/// first; rebuilt under locks that make writers wait.
extension PostgresLedger {
    /// The advisory lock a fold and a rebuild hold ("sgrollup" in ASCII): one at a time.
    static let rollupFoldLock: Int64 = 0x7367_726F_6C6C_7570

    public func foldRollupChanges(limit: Int) async throws(LedgerError) -> Int {
        guard limit > 0, try await hasRollupChanges() else { return 0 }
        let logger = self.logger
        return try await transaction { connection in
            try await Self.run(connection, "SELECT pg_advisory_xact_lock($1)", [.integer(Self.rollupFoldLock)], logger: logger)
            // The rows this transaction deletes are its own: a concurrent fold waits for the
            // lock, and a rebuild holds it too. Each change counts once, in one commit.
            let rows = try await Self.rows(connection, """
                DELETE FROM ledger_rollup_changes WHERE ctid = ANY(ARRAY(SELECT ctid FROM ledger_rollup_changes LIMIT $1))
                RETURNING deltas
                """, [.integer(Int64(limit))], logger: logger)
            var deltas: [Rollup] = []
            for row in rows { deltas += try RollupChanges.decode(try row.bytes(0)) }
            try await Self.addRollups(Rollup.merged(deltas), connection, logger: logger)
            return rows.count
        }
    }

    /// Whether a change waits (one round trip; a read finds none most of the time).
    private func hasRollupChanges() async throws(LedgerError) -> Bool {
        try await withConnection { connection in
            try await Self.rows(connection, "SELECT EXISTS (SELECT 1 FROM ledger_rollup_changes)", logger: self.logger).first?.bool(0) ?? false
        }
    }

    /// Adds `rollups` (one per key) to the stored ones, 5,000 per statement, and their sums
    /// per measure, day and currency to `ledger_rollup_days` (schema 18): every change of the
    /// rollups goes through here (or, added in the write, ``addRollupDays(_:_:logger:)``), so
    /// the two tables agree.
    static func addRollups(_ rollups: [Rollup], _ connection: PostgresConnection, logger: Logger) async throws {
        try await addRollupDays(rollups, connection, logger: logger)
        var start = 0
        while start < rollups.count {
            let chunk = rollups[start..<min(start + 5000, rollups.count)]
            try await run(connection, """
                INSERT INTO ledger_rollups (measure, environment, day, product_id, subscription_group, storefront, currency, offer, count, amount)
                SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::bigint[], $10::bigint[])
                ON CONFLICT (measure, environment, day, product_id, subscription_group, storefront, currency, offer) DO UPDATE SET
                    count = ledger_rollups.count + excluded.count, amount = ledger_rollups.amount + excluded.amount
                """, [
                    .texts(chunk.map(\.key.measure.rawValue)), .texts(chunk.map(\.key.environment.rawValue)), .integers(chunk.map(\.key.day)),
                    .texts(chunk.map(\.key.productId)), .texts(chunk.map(\.key.subscriptionGroup)), .texts(chunk.map(\.key.storefront)),
                    .texts(chunk.map(\.key.currency)), .texts(chunk.map(\.key.offer)), .integers(chunk.map(\.value.count)),
                    .integers(chunk.map(\.value.amount)),
                ], logger: logger)
            start += 5000
        }
    }

    /// Adds the sums of `rollups` per measure, day and currency (``Rollup/daySums(_:)``) to
    /// `ledger_rollup_days`, in one statement.
    static func addRollupDays(_ rollups: [Rollup], _ connection: PostgresConnection, logger: Logger) async throws {
        let days = Rollup.daySums(rollups)
        guard !days.isEmpty else { return }
        try await run(connection, """
            INSERT INTO ledger_rollup_days (measure, environment, day, currency, count, amount)
            SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[])
            ON CONFLICT (measure, environment, day, currency) DO UPDATE SET
                count = ledger_rollup_days.count + excluded.count, amount = ledger_rollup_days.amount + excluded.amount
            """, [
                .texts(days.map(\.key.measure.rawValue)), .texts(days.map(\.key.environment.rawValue)), .integers(days.map(\.key.day)),
                .texts(days.map(\.key.currency)), .integers(days.map(\.value.count)), .integers(days.map(\.value.amount)),
            ], logger: logger)
    }

    public func rollups(
        _ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64
    ) async throws(LedgerError) -> [Rollup] {
        try await foldAllRollupChanges()
        let values: [PostgresValue] = [
            .texts(measures.sorted().map(\.rawValue)), .text(environment.rawValue), .integer(from ?? .min), .integer(through),
        ]
        return try await withConnection { connection in
            try await Self.rows(connection, """
                SELECT measure, day, product_id, subscription_group, storefront, currency, offer, count, amount FROM ledger_rollups
                WHERE measure = ANY($1::text[]) AND environment = $2 AND day >= $3 AND day <= $4 AND (count <> 0 OR amount <> 0)
                """, values, logger: self.logger).map { row in try Self.rollup(row, environment: environment) }
        }
    }

    public func analyticsDrillDown(_ point: AnalyticsPointQuery, limit: Int) async throws(LedgerError) -> AnalyticsDrillDown {
        try AnalyticsPointQuery.check(limit: limit)
        let (lower, upper) = point.window
        let environment = point.environment.rawValue
        return try await withConnection { connection in
            // The families with a transaction covering the point's days (a scan of the
            // environment's transactions: no index on dates; the console reads one point).
            let originals = try await Self.rows(connection, """
                SELECT DISTINCT original_transaction_id FROM ledger_transactions
                WHERE environment = $1 AND purchase_date < $2
                    AND GREATEST(purchase_date, expires_date, revocation_date) >= $3
                ORDER BY original_transaction_id LIMIT $4
                """, [
                    .text(environment), .integer(upper.ledgerMilliseconds), .integer(lower.ledgerMilliseconds),
                    .integer(Int64(AnalyticsPointQuery.maximumFamilies + 1)),
                ], logger: self.logger).map { row in try row.text(0) }
            let truncated = originals.count > AnalyticsPointQuery.maximumFamilies
            let wanted = Array(originals.prefix(AnalyticsPointQuery.maximumFamilies))
            var transactions: [String: [RecordedTransaction]] = [:]
            for row in try await Self.rows(connection, """
                SELECT \(Self.transactionSelect) FROM ledger_transactions WHERE original_transaction_id = ANY($1::text[]) AND environment = $2
                """, [.texts(wanted), .text(environment)], logger: self.logger) {
                let transaction = try Self.decodeTransaction(row, offset: 0).value
                transactions[transaction.originalTransactionId, default: []].append(transaction)
            }
            var renewals: [String: RenewalRow] = [:]
            for row in try await Self.rows(connection, """
                SELECT \(Self.renewalSelect) FROM ledger_renewals WHERE original_transaction_id = ANY($1::text[]) AND environment = $2
                """, [.texts(wanted), .text(environment)], logger: self.logger) {
                let renewal = try Self.decodePlainRenewal(row)
                renewals[renewal.key.originalTransactionId] = renewal
            }
            let families = wanted.map { (transactions: transactions[$0] ?? [], renewal: renewals[$0]) }
            return AnalyticsDrillDown.make(point, families: families, limit: limit, truncated: truncated)
        }
    }

    /// The rollups summed over the dimensions not kept, in SQL (one `GROUP BY`), so a metric
    /// over two years crosses the wire as one row per measure, day and kept value.
    public func rollups(
        _ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64, keeping: RollupDimensions
    ) async throws(LedgerError) -> [Rollup] {
        let columns: [(dimension: RollupDimensions, column: String)] = [
            (.product, "product_id"), (.subscriptionGroup, "subscription_group"), (.storefront, "storefront"), (.currency, "currency"),
            (.offer, "offer"),
        ]
        let selected = columns.map { keeping.contains($0.dimension) ? $0.column : "''::text" }
        let grouped = ["measure", "day"] + columns.filter { keeping.contains($0.dimension) }.map(\.column)
        try await foldAllRollupChanges()
        let values: [PostgresValue] = [
            .texts(measures.sorted().map(\.rawValue)), .text(environment.rawValue), .integer(from ?? .min), .integer(through),
        ]
        return try await withConnection { connection in
            try await Self.rows(connection, """
                SELECT measure, day, \(selected.joined(separator: ", ")), SUM(count)::bigint, SUM(amount)::bigint
                FROM \(keeping.readsDaySums ? "ledger_rollup_days" : "ledger_rollups")
                WHERE measure = ANY($1::text[]) AND environment = $2 AND day >= $3 AND day <= $4
                GROUP BY \(grouped.joined(separator: ", ")) HAVING SUM(count) <> 0 OR SUM(amount) <> 0
                """, values, logger: self.logger).map { row in try Self.rollup(row, environment: environment) }
        }
    }

    /// A rollup row (measure, day, the five dimensions, count, amount) of `environment`.
    private static func rollup(_ row: PostgresRandomAccessRow, environment: AppStoreEnvironment) throws -> Rollup {
        guard let measure = RollupMeasure(rawValue: try row.text(0)) else {
            throw LedgerError(.storage, reason: "a stored rollup names an unknown measure")
        }
        return Rollup(
            key: RollupKey(
                day: try row.integer(1), measure: measure, environment: environment, productId: try row.text(2),
                subscriptionGroup: try row.text(3), storefront: try row.text(4), currency: try row.text(5), offer: try row.text(6)
            ),
            value: RollupValue(count: try row.integer(7), amount: try row.integer(8))
        )
    }

    @discardableResult
    public func rebuildRollups() async throws(LedgerError) -> RollupRebuild {
        let logger = self.logger
        return try await transaction(bounded: false) { connection in
            try await Self.rebuildRollups(connection, logger: logger)
        }
    }

    /// Rebuilds the rollups when migration 14 found transactions recorded before them.
    func rebuildRollupsIfNeeded() async throws(LedgerError) {
        let logger = self.logger
        try await transaction(bounded: false) { connection in
            let needed = try await Self.rows(connection, "SELECT needs_rebuild FROM ledger_analytics_state FOR UPDATE", logger: logger)
            guard try needed.first?.bool(0) == true else { return }
            _ = try await Self.rebuildRollups(connection, logger: logger)
        }
    }

    /// Recomputes every rollup inside the caller's transaction. The fold's lock and the
    /// exclusive locks on the queue and the rollups come first: a recording that queued its
    /// changes before them commits first, and the rebuild reads its rows and drops its
    /// changes; one that had not waits for the rebuild (which did not see its rows), then
    /// queues its changes for a fold.
    static func rebuildRollups(_ connection: PostgresConnection, logger: Logger) async throws -> RollupRebuild {
        try await run(connection, "SELECT pg_advisory_xact_lock($1)", [.integer(rollupFoldLock)], logger: logger)
        try await connection.query("LOCK TABLE ledger_rollup_changes IN EXCLUSIVE MODE", logger: logger)
        try await connection.query("LOCK TABLE ledger_rollups IN EXCLUSIVE MODE", logger: logger)
        try await connection.query("LOCK TABLE ledger_rollup_days IN EXCLUSIVE MODE", logger: logger)
        var renewals: [FamilyKey: RenewalRow] = [:]
        for row in try await rows(connection, "SELECT \(renewalSelect) FROM ledger_renewals", logger: logger) {
            let renewal = try decodePlainRenewal(row)
            renewals[renewal.key] = renewal
        }
        var accumulator = RollupAccumulator()
        var family: [RecordedTransaction] = []
        var current: FamilyKey?
        let stream = try await connection.query(
            PostgresQuery(unsafeSQL: "SELECT \(transactionSelect) FROM ledger_transactions ORDER BY original_transaction_id, environment"),
            logger: logger
        )
        for try await row in stream {
            let transaction = try decodeTransaction(row.makeRandomAccess(), offset: 0)
            if transaction.familyKey != current {
                if let current { accumulator.add(family: family, renewal: renewals[current]) }
                current = transaction.familyKey
                family = []
            }
            family.append(transaction.value)
        }
        if let current { accumulator.add(family: family, renewal: renewals[current]) }
        try await connection.query("DELETE FROM ledger_rollup_changes", logger: logger)
        try await connection.query("DELETE FROM ledger_rollups", logger: logger)
        try await connection.query("DELETE FROM ledger_rollup_days", logger: logger)
        try await addRollups(accumulator.rollups, connection, logger: logger)
        try await run(connection, "UPDATE ledger_analytics_state SET needs_rebuild = false, rebuilt_at = $1",
                      [.integer(Int64(Date().timeIntervalSince1970 * 1000))], logger: logger)
        return accumulator.report
    }

    /// The renewal columns in the order ``decodePlainRenewal(_:)`` reads.
    static let renewalSelect = """
        environment, original_transaction_id, product_id, auto_renew_product_id, will_auto_renew, expiration_intent, \
        is_in_billing_retry_period, grace_period_expires_date, renewal_date, observed_at
        """

    static func decodePlainRenewal(_ row: PostgresRandomAccessRow) throws -> RenewalRow {
        RenewalRow(
            key: FamilyKey(environment: AppStoreEnvironment(rawValue: try row.text(0)), originalTransactionId: try row.text(1)),
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

    /// Sets one transaction's unknown money facts and moves its family's rollups, in one
    /// transaction. The family's and the transaction's revisions move, so a recording planned
    /// from the rows before retries.
    func fillMoneyAndRollups(_ money: MoneyFacts, transactionId: String, environment: AppStoreEnvironment, now: Int64) async throws(LedgerError) -> Bool {
        let logger = self.logger
        return try await transaction { connection in
            let target = try await Self.rows(connection, """
                SELECT original_transaction_id, money_known FROM ledger_transactions WHERE transaction_id = $1 AND environment = $2 FOR UPDATE
                """, [.text(transactionId), .text(environment.rawValue)], logger: logger).first
            guard let target, try !target.bool(1) else { return false }
            let original = try target.text(0)
            let familyValues: [PostgresValue] = [.text(original), .text(environment.rawValue)]
            try await Self.run(connection, """
                UPDATE ledger_families SET revision = revision + 1 WHERE original_transaction_id = $1 AND environment = $2
                """, familyValues, logger: logger)
            let family = try await Self.rows(connection, """
                SELECT \(Self.transactionSelect) FROM ledger_transactions WHERE original_transaction_id = $1 AND environment = $2
                """, familyValues, logger: logger).map { row in try Self.decodeTransaction(row, offset: 0).value }
            let renewal = try await Self.rows(connection, """
                SELECT \(Self.renewalSelect) FROM ledger_renewals WHERE original_transaction_id = $1 AND environment = $2
                """, familyValues, logger: logger).first.map(Self.decodePlainRenewal)
            let before = FamilyRollup.contributions(family, renewal: renewal)
            let after = FamilyRollup.contributions(family.map { transaction in
                var filled = transaction
                if filled.transactionId == transactionId { filled.money = money }
                return filled
            }, renewal: renewal)
            try await Self.run(connection, """
                UPDATE ledger_transactions SET money_known = true, price = $1, currency = $2, storefront = $3, offer_type = $4,
                    offer_identifier = $5, offer_period = $6, offer_discount_type = $7, transaction_reason = $8, updated_at = $9,
                    revision = revision + 1
                WHERE transaction_id = $10 AND environment = $11
                """, [
                    .optional(money.price), .optional(money.currency), .optional(money.storefront), .optional(money.offerType),
                    .optional(money.offerIdentifier), .optional(money.offerPeriod), .optional(money.offerDiscountType),
                    .optional(money.transactionReason), .integer(now), .text(transactionId), .text(environment.rawValue),
                ], logger: logger)
            try await Self.addRollups(FamilyRollup.delta(from: before, to: after), connection, logger: logger)
            return true
        }
    }
}

/// The documented SQL views for BI tools (docs/analytics.md): stable names and columns; later
/// versions only add columns.
enum PostgresAnalytics {
    static let views = [
        """
        CREATE VIEW storegate_transactions AS SELECT
            environment, transaction_id, original_transaction_id, account_id, bundle_id, product_id, product_type,
            subscription_group, quantity,
            to_timestamp(purchase_date / 1000.0) AS purchased_at,
            to_timestamp(expires_date / 1000.0) AS expires_at,
            to_timestamp(revocation_date / 1000.0) AS revoked_at,
            revocation_reason, is_upgraded, money_known,
            price AS price_milliunits, price / 1000.0 AS price, currency, storefront,
            offer_type, offer_identifier, offer_period, offer_discount_type, transaction_reason,
            CASE WHEN NOT money_known THEN NULL
                 WHEN offer_type IS NULL THEN 'normal'
                 WHEN offer_type = 1 AND (offer_discount_type = 'FREE_TRIAL' OR (offer_discount_type IS NULL AND price = 0)) THEN 'trial'
                 WHEN offer_type = 1 THEN 'introductory'
                 ELSE 'promotional' END AS period_type,
            source, app_account_token
        FROM ledger_transactions
        """,
        """
        CREATE VIEW storegate_daily_rollups AS SELECT
            (DATE '1970-01-01' + day::integer) AS day, measure, environment, product_id, subscription_group, storefront,
            currency, offer, count, amount AS amount_milliunits, amount / 1000.0 AS amount
        FROM ledger_rollups WHERE count <> 0 OR amount <> 0
        """,
        """
        CREATE VIEW storegate_daily_revenue AS SELECT
            (DATE '1970-01-01' + day::integer) AS day, environment, product_id, subscription_group, storefront, currency,
            SUM(CASE WHEN measure = 'revenue' THEN count ELSE 0 END) AS transactions,
            SUM(CASE WHEN measure = 'revenue' THEN amount ELSE 0 END) / 1000.0 AS gross_revenue,
            SUM(CASE WHEN measure = 'refunds' THEN count ELSE 0 END) AS refunds,
            SUM(CASE WHEN measure = 'refunds' THEN amount ELSE 0 END) / 1000.0 AS refunded_amount,
            SUM(CASE WHEN measure = 'unpriced' THEN count ELSE 0 END) AS unpriced_transactions
        FROM ledger_rollups WHERE measure IN ('revenue', 'refunds', 'unpriced')
        GROUP BY day, environment, product_id, subscription_group, storefront, currency
        """,
    ]
}

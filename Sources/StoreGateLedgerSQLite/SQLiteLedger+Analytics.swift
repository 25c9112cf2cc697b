import Foundation
public import StoreGateCore
public import StoreGateLedger

/// The daily analytics rollups (schema 14, ``AnalyticsStore``): each write queues its changes
/// (schema 17, ``RollupChanges``) in the writer's transaction, a fold adds them in batches,
/// and reads fold first, then read along the primary key.
extension SQLiteLedger {
    static let upsertRollup = """
        INSERT INTO ledger_rollups (measure, environment, day, product_id, subscription_group, storefront, currency, offer, count, amount)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (measure, environment, day, product_id, subscription_group, storefront, currency, offer)
        DO UPDATE SET count = count + excluded.count, amount = amount + excluded.amount
        """

    static let upsertRollupDay = """
        INSERT INTO ledger_rollup_days (measure, environment, day, currency, count, amount) VALUES (?, ?, ?, ?, ?, ?)
        ON CONFLICT (measure, environment, day, currency) DO UPDATE SET count = count + excluded.count, amount = amount + excluded.amount
        """

    public func rollups(
        _ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64
    ) async throws(LedgerError) -> [Rollup] {
        try await readRollups(
            """
            SELECT day, product_id, subscription_group, storefront, currency, offer, count, amount FROM ledger_rollups
            WHERE measure = ? AND environment = ? AND day >= ? AND day <= ? AND (count <> 0 OR amount <> 0)
            """, measures, environment: environment, from: from, through: through
        )
    }

    public func analyticsDrillDown(_ point: AnalyticsPointQuery, limit: Int) async throws(LedgerError) -> AnalyticsDrillDown {
        try AnalyticsPointQuery.check(limit: limit)
        let (lower, upper) = point.window
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: true) { connection throws(LedgerError) in
                // The families with a transaction covering the point's days (a scan of the
                // environment's transactions: no index on dates; the console reads one point).
                var originals: [String] = []
                try connection.query("""
                    SELECT DISTINCT original_transaction_id FROM ledger_transactions
                    WHERE environment = ? AND purchase_date < ?
                        AND MAX(purchase_date, COALESCE(expires_date, purchase_date), COALESCE(revocation_date, purchase_date)) >= ?
                    ORDER BY original_transaction_id LIMIT ?
                    """, [
                        .text(point.environment.rawValue), .integer(upper.ledgerMilliseconds), .integer(lower.ledgerMilliseconds),
                        .integer(Int64(AnalyticsPointQuery.maximumFamilies + 1)),
                    ]
                ) { row throws(LedgerError) in originals.append(row.text(0)) }
                let truncated = originals.count > AnalyticsPointQuery.maximumFamilies
                var families: [(transactions: [RecordedTransaction], renewal: RenewalRow?)] = []
                for original in originals.prefix(AnalyticsPointQuery.maximumFamilies) {
                    let values: [SQLiteValue] = [.text(point.environment.rawValue), .text(original)]
                    var rows: [RecordedTransaction] = []
                    try connection.query(Self.selectOfFamily, values) { row throws(LedgerError) in rows.append(try Self.decodeTransaction(row).value) }
                    var renewal: RenewalRow?
                    try connection.query(Self.selectRenewal, values) { row throws(LedgerError) in renewal = Self.decodeRenewal(row) }
                    families.append((rows, renewal))
                }
                return AnalyticsDrillDown.make(point, families: families, limit: limit, truncated: truncated)
            }
        }
    }

    /// The rollups summed over the dimensions not kept, in SQL: one `GROUP BY` per measure
    /// along the primary key's (measure, environment, day) prefix, so a metric over two years
    /// crosses into Swift as one row per day and kept value. Keeping the currency at most, it
    /// sums the day sums (schema 18) instead: a row per day and currency, however many keys
    /// a day holds.
    public func rollups(
        _ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64, keeping: RollupDimensions
    ) async throws(LedgerError) -> [Rollup] {
        let selected = Self.rollupDimensionColumns.map { keeping.contains($0.dimension) ? $0.column : "''" }
        let grouped = ["day"] + Self.rollupDimensionColumns.filter { keeping.contains($0.dimension) }.map(\.column)
        let sql = """
            SELECT day, \(selected.joined(separator: ", ")), SUM(count), SUM(amount) FROM \(keeping.readsDaySums ? "ledger_rollup_days" : "ledger_rollups")
            WHERE measure = ? AND environment = ? AND day >= ? AND day <= ?
            GROUP BY \(grouped.joined(separator: ", ")) HAVING SUM(count) <> 0 OR SUM(amount) <> 0
            """
        return try await readRollups(sql, measures, environment: environment, from: from, through: through)
    }

    /// Runs `sql` (columns: day, the five dimensions, count, amount; binds: measure,
    /// environment, first and last day) once per measure, in one snapshot.
    private func readRollups(
        _ sql: String, _ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64
    ) async throws(LedgerError) -> [Rollup] {
        try await foldAllRollupChanges()
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: true) { connection throws(LedgerError) in
                var found: [Rollup] = []
                for measure in measures.sorted() {
                    try connection.query(sql, [.text(measure.rawValue), .text(environment.rawValue), .integer(from ?? .min), .integer(through)]) { row throws(LedgerError) in
                        found.append(Rollup(
                            key: RollupKey(
                                day: row.integer(0), measure: measure, environment: environment, productId: row.text(1),
                                subscriptionGroup: row.text(2), storefront: row.text(3), currency: row.text(4), offer: row.text(5)
                            ),
                            value: RollupValue(count: row.integer(6), amount: row.integer(7))
                        ))
                    }
                }
                return found
            }
        }
    }

    /// The rollup key's dimension columns, in ``RollupKey``'s order.
    static let rollupDimensionColumns: [(dimension: RollupDimensions, column: String)] = [
        (.product, "product_id"), (.subscriptionGroup, "subscription_group"), (.storefront, "storefront"), (.currency, "currency"),
        (.offer, "offer"),
    ]

    @discardableResult
    public func rebuildRollups() async throws(LedgerError) -> RollupRebuild {
        try await write(alone: true) { connection throws(LedgerError) -> RollupRebuild in
            try Self.rebuildRollups(connection)
        }
    }

    /// Reads and merges the queued changes on a reader, off the writer's thread; the writer
    /// then checks that the same rows are still queued (another fold may have taken them) and
    /// only adds and deletes — or, if they are not, folds from what it reads itself.
    public func foldRollupChanges(limit: Int) async throws(LedgerError) -> Int {
        guard limit > 0 else { return 0 }
        let read = try await perform { () throws(LedgerError) in
            try self.read(snapshot: true) { connection throws(LedgerError) in
                let queued = try Self.queuedRollupChanges(limit: limit, connection)
                let merged = Rollup.merged(try Self.decode(queued))
                return (queued: queued, merged: merged, days: Rollup.daySums(merged))
            }
        }
        guard let last = read.queued.last?.sequence else { return 0 }
        return try await write { connection throws(LedgerError) -> Int in
            guard try Self.queuedRollupChanges(limit: read.queued.count, connection) == read.queued else {
                return try Self.foldRollupChanges(limit: limit, connection)
            }
            try Self.applyRollups(read.merged, days: read.days, connection)
            try connection.run("DELETE FROM ledger_rollup_changes WHERE sequence <= ?", [.integer(last)])
            return read.queued.count
        }
    }

    /// One queued row: a write's encoded changes.
    struct QueuedRollupChange: Equatable, Sendable {
        let sequence: Int64
        let deltas: [UInt8]
    }

    /// The oldest `limit` queued rows.
    static func queuedRollupChanges(limit: Int, _ connection: SQLiteConnection) throws(LedgerError) -> [QueuedRollupChange] {
        var queued: [QueuedRollupChange] = []
        try connection.query("SELECT sequence, deltas FROM ledger_rollup_changes ORDER BY sequence LIMIT ?", [.integer(Int64(limit))]) { row throws(LedgerError) in
            queued.append(QueuedRollupChange(sequence: row.integer(0), deltas: row.blob(1)))
        }
        return queued
    }

    /// The changes of `queued`, in order (``RollupChanges/decode(_:)``).
    private static func decode(_ queued: [QueuedRollupChange]) throws(LedgerError) -> [Rollup] {
        var deltas: [Rollup] = []
        for change in queued { deltas += try RollupChanges.decode(change.deltas) }
        return deltas
    }

    /// Queues a write's encoded rollup changes (inside the writer's transaction;
    /// ``LedgerWritePlan/queuedRollupDeltas``): one row, whatever the number of keys — or, in
    /// a group commit, one row for all its jobs, their encodings back to back, written just
    /// before it commits (``flushStagedRollupChanges(_:)``): a row and its index entry per
    /// batch instead of per write, and nothing encoded or merged on the writer's thread (the
    /// fold merges on its reader).
    static func queueRollupChanges(_ encoded: [UInt8], _ connection: SQLiteConnection) throws(LedgerError) {
        guard !encoded.isEmpty else { return }
        if connection.stagedRollupChanges != nil {
            connection.stagedRollupChanges?.append(contentsOf: encoded)
            return
        }
        try connection.run("INSERT INTO ledger_rollup_changes (deltas) VALUES (?)", [.blob(encoded)])
    }

    /// Queues the changes a group commit's jobs staged as one row (inside its transaction,
    /// before the commit), and stages nothing more.
    static func flushStagedRollupChanges(_ connection: SQLiteConnection) throws(LedgerError) {
        guard let staged = connection.stagedRollupChanges else { return }
        connection.stagedRollupChanges = nil
        guard !staged.isEmpty else { return }
        try connection.run("INSERT INTO ledger_rollup_changes (deltas) VALUES (?)", [.blob(staged)])
    }

    /// Adds the oldest `limit` queued changes to the rollups, merged, and deletes them (inside
    /// the writer's transaction).
    ///
    /// - Returns: How many were folded.
    static func foldRollupChanges(limit: Int, _ connection: SQLiteConnection) throws(LedgerError) -> Int {
        let queued = try queuedRollupChanges(limit: limit, connection)
        guard let last = queued.last?.sequence else { return 0 }
        try applyRollups(Rollup.merged(try decode(queued)), connection)
        try connection.run("DELETE FROM ledger_rollup_changes WHERE sequence <= ?", [.integer(last)])
        return queued.count
    }

    /// Adds rollup deltas (inside the caller's transaction), and their sums per measure, day
    /// and currency to `ledger_rollup_days` (schema 18): every change of the rollups goes
    /// through here, so the two tables agree (`daySums` is off only for a test writing at a
    /// schema before 18, ``LedgerWritePlan/addsRollupDays``).
    static func applyRollups(_ deltas: [Rollup], _ connection: SQLiteConnection, daySums: Bool = true) throws(LedgerError) {
        try applyRollups(deltas, days: daySums ? Rollup.daySums(deltas) : [], connection)
    }

    /// Adds rollup deltas and their day sums computed already (`days`, ``Rollup/daySums(_:)``
    /// of `deltas`: a fold computes them on its reader, beside the merge, off the writer's
    /// thread).
    static func applyRollups(_ deltas: [Rollup], days: [Rollup], _ connection: SQLiteConnection) throws(LedgerError) {
        for delta in deltas {
            let key = delta.key
            try connection.run(upsertRollup, [
                .text(key.measure.rawValue), .text(key.environment.rawValue), .integer(key.day), .text(key.productId),
                .text(key.subscriptionGroup), .text(key.storefront), .text(key.currency), .text(key.offer),
                .integer(delta.value.count), .integer(delta.value.amount),
            ])
        }
        for day in days {
            let key = day.key
            try connection.run(upsertRollupDay, [
                .text(key.measure.rawValue), .text(key.environment.rawValue), .integer(key.day), .text(key.currency),
                .integer(day.value.count), .integer(day.value.amount),
            ])
        }
    }

    /// Recomputes every rollup from the transactions, read in the table's family order, and
    /// clears the flag migration 14 set (inside the caller's transaction).
    static func rebuildRollups(_ connection: SQLiteConnection) throws(LedgerError) -> RollupRebuild {
        // Changes staged by earlier jobs of a group commit would be counted twice (their
        // transactions are read below); dropping them could not be undone by a rollback to
        // this job's savepoint. A rebuild runs alone (``rebuildRollups()``).
        if let staged = connection.stagedRollupChanges, !staged.isEmpty {
            throw LedgerError(.storage, reason: "a rollup rebuild runs in a transaction of its own, not after other writes of a group commit")
        }
        var renewals: [FamilyKey: RenewalRow] = [:]
        try connection.query("SELECT \(renewalColumns) FROM ledger_renewals") { row throws(LedgerError) in
            let renewal = decodeRenewal(row)
            renewals[renewal.key] = renewal
        }
        var accumulator = RollupAccumulator()
        var family: [RecordedTransaction] = []
        var current: FamilyKey?
        try connection.query("SELECT \(transactionColumns) FROM ledger_transactions ORDER BY environment, original_transaction_id") { row throws(LedgerError) in
            let transaction = try decodeTransaction(row)
            if transaction.familyKey != current {
                if let current { accumulator.add(family: family, renewal: renewals[current]) }
                current = transaction.familyKey
                family = []
            }
            family.append(transaction.value)
        }
        if let current { accumulator.add(family: family, renewal: renewals[current]) }
        // The queued changes are of transactions the rebuild has just read.
        try connection.run("DELETE FROM ledger_rollup_changes")
        try connection.run("DELETE FROM ledger_rollups")
        try connection.run("DELETE FROM ledger_rollup_days")
        try applyRollups(accumulator.rollups, connection)
        try connection.run("UPDATE ledger_analytics_state SET needs_rebuild = 0, rebuilt_at = ?", [.integer(Int64(Date().timeIntervalSince1970 * 1000))])
        return accumulator.report
    }

    /// Rebuilds the rollups when migration 14 found transactions recorded before them.
    static func rebuildRollupsIfNeeded(_ connection: SQLiteConnection) throws(LedgerError) {
        var needed = false
        try connection.query("SELECT needs_rebuild FROM ledger_analytics_state") { row throws(LedgerError) in needed = row.integer(0) != 0 }
        guard needed else { return }
        try connection.transaction(immediate: true) { () throws(LedgerError) in
            _ = try rebuildRollups(connection)
        }
    }

    /// Sets one transaction's unknown money facts and moves its family's rollups (inside the
    /// writer's transaction); the rows changed.
    static func fillMoneyAndRollups(
        _ money: MoneyFacts, transactionId: String, environment: AppStoreEnvironment, now: Int64, _ connection: SQLiteConnection
    ) throws(LedgerError) -> Bool {
        guard let row = try loadTransactions(connection, [TransactionKey(environment: environment, transactionId: transactionId)]).first,
              row.value.money == nil
        else { return false }
        let familyValues: [SQLiteValue] = [.text(environment.rawValue), .text(row.value.originalTransactionId)]
        var family: [RecordedTransaction] = []
        try connection.query(selectOfFamily, familyValues) { row throws(LedgerError) in family.append(try decodeTransaction(row).value) }
        var renewal: RenewalRow?
        try connection.query(selectRenewal, familyValues) { row throws(LedgerError) in renewal = decodeRenewal(row) }
        let before = FamilyRollup.contributions(family, renewal: renewal)
        let after = FamilyRollup.contributions(family.map { transaction in
            var filled = transaction
            if filled.transactionId == transactionId { filled.money = money }
            return filled
        }, renewal: renewal)
        guard try fillMoney(money, transactionId: transactionId, environment: environment, now: now, connection) > 0 else { return false }
        try applyRollups(FamilyRollup.delta(from: before, to: after), connection)
        return true
    }
}

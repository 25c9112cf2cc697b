/// The transactions behind one point of a metric (``AnalyticsPointQuery``): each with the
/// figure it adds to the point, from the same rules as the rollups (`FamilyRollup`), so the
/// entries' figures sum to the point's value.
public struct AnalyticsDrillDown: Sendable, Hashable {
    /// How an entry's figure enters the point.
    public enum Role: String, Sendable, Hashable, Codable {
        /// Added (a count, an amount, a ratio's numerator, a period active at the gauge's day).
        case adds
        /// Subtracted (a refund in estimated proceeds).
        case subtracts
        /// A ratio's denominator (a trial that ended, for the conversion rate).
        case denominator
    }

    /// One transaction's figure in the point.
    public struct Entry: Sendable, Hashable {
        /// The transaction the figure is counted for.
        public var transaction: RecordedTransaction
        /// The figure's rollup key: its measure, its day and the transaction's dimensions.
        public var key: RollupKey
        /// The figure: a count, and an amount in milliunits of ``RollupKey/currency``.
        public var value: RollupValue
        /// How it enters the point.
        public var role: Role

        /// Creates an entry.
        public init(transaction: RecordedTransaction, key: RollupKey, value: RollupValue, role: Role) {
            self.transaction = transaction
            self.key = key
            self.value = value
            self.role = role
        }
    }

    /// The point explained.
    public var query: AnalyticsPointQuery
    /// The entries, by day, then purchase date, then transaction id.
    public var entries: [Entry]
    /// Whether entries were left out (more than the limit, or more families than
    /// ``AnalyticsPointQuery/maximumFamilies`` around the point).
    public var isTruncated: Bool

    /// Creates a drill-down.
    public init(query: AnalyticsPointQuery, entries: [Entry], isTruncated: Bool) {
        self.query = query
        self.entries = entries
        self.isTruncated = isTruncated
    }

    /// The entries of `families` (each a family's transactions and its latest renewal info)
    /// that make the point: the backends read the families, this decides.
    package static func entries(
        for query: AnalyticsPointQuery, families: [(transactions: [RecordedTransaction], renewal: RenewalRow?)]
    ) -> [Entry] {
        let metric = query.metric
        let plus = Set(metric.measures.plus), minus = Set(metric.measures.minus)
        func matches(_ key: RollupKey, _ value: RollupValue) -> Bool {
            guard key.environment == query.environment else { return false }
            if let groupBy = query.groupBy, groupBy.value(of: key) != query.group { return false }
            if metric.isAmount {
                // The series leaves zero amounts (unknown prices) out of amount points.
                if value.amount == 0 { return false }
                if let currency = query.currency, key.currency != currency { return false }
            }
            return true
        }
        var entries: [Entry] = []
        for family in families {
            let figures = FamilyRollup.attributed(family.transactions, renewal: family.renewal)
            if query.isGauge {
                // A period is active at the end of `to` when it began on or before that day and
                // ends after it: its start figure counts, as the calculator's running sum does.
                var ends: [String: Int64] = [:]
                for figure in figures where minus.contains(figure.key.measure) { ends[figure.transaction.transactionId] = figure.key.day }
                for figure in figures where plus.contains(figure.key.measure) && figure.key.day <= query.to.number {
                    guard let end = ends[figure.transaction.transactionId], end > query.to.number, matches(figure.key, figure.value) else { continue }
                    entries.append(Entry(transaction: figure.transaction, key: figure.key, value: figure.value, role: .adds))
                }
            } else {
                for figure in figures where figure.key.day >= query.from.number && figure.key.day <= query.to.number {
                    let role: Role
                    if plus.contains(figure.key.measure) {
                        role = .adds
                    } else if minus.contains(figure.key.measure) {
                        role = metric.kind == .ratio ? .denominator : .subtracts
                    } else {
                        continue
                    }
                    guard matches(figure.key, figure.value) else { continue }
                    entries.append(Entry(transaction: figure.transaction, key: figure.key, value: figure.value, role: role))
                }
            }
        }
        return entries.sorted {
            ($0.key.day, $0.transaction.purchaseDate, $0.transaction.transactionId, $0.key.measure)
                < ($1.key.day, $1.transaction.purchaseDate, $1.transaction.transactionId, $1.key.measure)
        }
    }

    /// A drill-down of `families`, at most `limit` entries; `truncated` when the backend left
    /// families out.
    package static func make(
        _ query: AnalyticsPointQuery, families: [(transactions: [RecordedTransaction], renewal: RenewalRow?)], limit: Int, truncated: Bool
    ) -> AnalyticsDrillDown {
        let all = entries(for: query, families: families)
        return AnalyticsDrillDown(query: query, entries: Array(all.prefix(limit)), isTruncated: truncated || all.count > limit)
    }
}

public import StoreGateCore

/// What a metric is asked for: which metric, over which days, in which buckets, split how.
public struct AnalyticsQuery: Sendable, Hashable {
    /// The metric.
    public var metric: AnalyticsMetric
    /// The first day (UTC), inclusive.
    public var from: AnalyticsDay
    /// The last day (UTC), inclusive; days after today are not reported.
    public var to: AnalyticsDay
    /// The bucket length.
    public var interval: AnalyticsInterval
    /// What to split by (amounts are also always split by currency).
    public var groupBy: AnalyticsGrouping?
    /// The environment whose transactions count (production by default).
    public var environment: AppStoreEnvironment

    /// The most days one query may span (about 20 years).
    public static let maximumDays: Int64 = 7_400

    /// Creates a query.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` when `to` is before `from` or the range
    ///   spans more than ``maximumDays``.
    public init(
        metric: AnalyticsMetric, from: AnalyticsDay, to: AnalyticsDay, interval: AnalyticsInterval = .day,
        groupBy: AnalyticsGrouping? = nil, environment: AppStoreEnvironment = .production
    ) throws(LedgerError) {
        guard from <= to else { throw LedgerError(.invalidArgument, reason: "the range ends (\(to)) before it begins (\(from))") }
        guard to.number - from.number < Self.maximumDays else {
            throw LedgerError(.invalidArgument, reason: "a range spans at most \(Self.maximumDays) days")
        }
        self.metric = metric
        self.from = from
        self.to = to
        self.interval = interval
        self.groupBy = groupBy
        self.environment = environment
    }

    /// The measures to read: the metric's, and the unpriced count beside an amount.
    public var measures: Set<RollupMeasure> {
        var all = Set(metric.measures.plus + metric.measures.minus)
        if metric.isAmount { all.insert(.unpriced) }
        return all
    }

    /// The rollup dimensions the series needs (``AnalyticsStore/rollups(_:environment:from:through:keeping:)``):
    /// the grouping's, the currency of an amount, and the product of estimated proceeds (whose
    /// commission rate is per product).
    public var dimensions: RollupDimensions {
        var kept: RollupDimensions = []
        if let groupBy { kept.insert(RollupDimensions(groupBy)) }
        if metric.isAmount { kept.insert(.currency) }
        if metric == .estimatedProceeds { kept.insert(.product) }
        return kept
    }

    /// Whether the metric sums every day before the range too (a gauge).
    public var readsFromStart: Bool {
        metric.kind == .gaugeCount || metric.kind == .gaugeAmount
    }
}

extension AnalyticsQuery {
    /// What the query reads through `through` (its last reported day): its buckets, except
    /// where a figure must be computed per day — amounts converted into a reporting currency
    /// (each day at its rate) and estimated proceeds at a commission above 50 %
    /// (``RollupBucketRead/sumsProceeds(at:)``) read one bucket per day.
    package func bucketRead(through: AnalyticsDay, commission: CommissionRates, exchangeRates: ExchangeRates?) throws(LedgerError) -> RollupBucketRead {
        let isProceeds = metric == .estimatedProceeds
        let daily = (exchangeRates != nil && metric.isAmount && !readsFromStart)
            || (isProceeds && !RollupBucketRead.sumsProceeds(at: commission))
        let starts = daily
            ? Array(from.number...through.number)
            : AnalyticsCalculator.buckets(from: from, through: through, interval: interval).map(\.start.number)
        // Proceeds netted in the store need the product only for its rate: summed over unless grouped by.
        let netted = isProceeds && RollupBucketRead.sumsProceeds(at: commission)
        var kept = dimensions
        if netted, groupBy != .product { kept.remove(.product) }
        return try RollupBucketRead(
            measures: measures, environment: environment, bucketStarts: starts, through: through.number, readsFromStart: readsFromStart,
            keeping: kept, proceeds: netted ? commission : nil
        )
    }
}

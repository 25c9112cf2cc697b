public import StoreGateCore

/// What one metric query reads from the rollups (``AnalyticsStore/rollups(_:)``): its
/// measures, summed over the dimensions it does not keep and then over the days of each of
/// its buckets, so a backend that sums in its database sends one figure per measure, bucket
/// and kept value.
///
/// The buckets are given by their first days, computed by the shared Swift code
/// (``AnalyticsCalculator``'s buckets of the query's interval, clipped to the range), so a
/// backend never computes a week or a month itself: it places each day in the last bucket
/// starting on or before it.
public struct RollupBucketRead: Sendable, Hashable {
    /// The measures read.
    public var measures: Set<RollupMeasure>
    /// The environment read.
    public var environment: AppStoreEnvironment
    /// The first day of each bucket, ascending, without a gap; the first is the range's first day.
    public var bucketStarts: [Int64]
    /// The range's last day (inclusive).
    public var through: Int64
    /// Whether the days before the range are read too (a gauge's running total): summed into
    /// one row per measure and kept value, dated the day before the range.
    public var readsFromStart: Bool
    /// The dimensions kept; the others read as empty strings.
    public var keeping: RollupDimensions
    /// When set, each day's amount, summed over the dimensions not kept but per product (read
    /// for its rate even when ``keeping`` does not hold ``RollupDimensions/product``), is
    /// replaced by its estimated proceeds at these rates before the days of a bucket (and the
    /// products, when not kept) are summed — the rounding per daily rollup that estimated
    /// proceeds define.
    public var proceeds: CommissionRates?

    /// Creates a read.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` when there is no bucket, the first does
    ///   not start the range, they are not ascending, or the range ends before the last one.
    public init(
        measures: Set<RollupMeasure>, environment: AppStoreEnvironment, bucketStarts: [Int64], through: Int64, readsFromStart: Bool,
        keeping: RollupDimensions, proceeds: CommissionRates? = nil
    ) throws(LedgerError) {
        guard let last = bucketStarts.last, last <= through else {
            throw LedgerError(.invalidArgument, reason: "a bucketed rollup read needs at least one bucket starting in its range")
        }
        guard zip(bucketStarts, bucketStarts.dropFirst()).allSatisfy({ $0 < $1 }) else {
            throw LedgerError(.invalidArgument, reason: "the buckets of a rollup read must start on ascending days")
        }
        self.measures = measures
        self.environment = environment
        self.bucketStarts = bucketStarts
        self.through = through
        self.readsFromStart = readsFromStart
        self.keeping = keeping
        self.proceeds = proceeds
    }

    /// The range's first day.
    public var from: Int64 { bucketStarts[0] }

    /// The day a backend dates the sum of bucket `index` (0: the days before the range; `n`:
    /// the bucket starting at `bucketStarts[n - 1]`), the numbering of PostgreSQL's
    /// `width_bucket(day, bucketStarts)`.
    public func day(ofBucket index: Int) -> Int64? {
        if index == 0 { return readsFromStart ? from - 1 : nil }
        return index <= bucketStarts.count ? bucketStarts[index - 1] : nil
    }

    /// Whether every rate keeps at least half the amount, so a day's non-zero amount always has
    /// non-zero proceeds (|amount × kept| ≥ 500 rounds away from zero): summing proceeds by
    /// bucket then sees the same groups as summing them by day. Above a 50 % commission the
    /// calculator reads daily rows instead.
    public static func sumsProceeds(at commission: CommissionRates) -> Bool {
        commission.defaultPerMille <= 500 && commission.products.values.allSatisfy { $0 <= 500 }
    }
}

extension AnalyticsStore {
    /// The daily sums (``rollups(_:environment:from:through:keeping:)``), each day's amount
    /// replaced by its proceeds when asked: a backend without a bucketing query. The calculator
    /// places each day in its bucket itself.
    public func rollups(_ read: RollupBucketRead) async throws(LedgerError) -> [Rollup] {
        let daily = try await rollups(
            read.measures, environment: read.environment, from: read.readsFromStart ? nil : read.from, through: read.through,
            keeping: read.proceeds == nil ? read.keeping : read.keeping.union(.product)
        )
        guard let commission = read.proceeds else { return daily }
        return daily.map { rollup in
            Rollup(
                key: read.keeping.projecting(rollup.key),
                value: RollupValue(count: rollup.value.count, amount: commission.proceeds(of: rollup.value.amount, productId: rollup.key.productId))
            )
        }
    }
}

/// A metric's answer: one point per bucket and group (and currency for amounts).
public struct AnalyticsSeries: Sendable, Hashable {
    /// One bucket's figure for one group.
    public struct Point: Sendable, Hashable {
        /// The bucket's first day (clipped to the range).
        public var start: AnalyticsDay
        /// The bucket's last day (clipped to the range and to today).
        public var end: AnalyticsDay
        /// The group's value, when the series is grouped (empty: unknown, e.g. a receipt's storefront).
        public var group: String?
        /// The currency of ``amount`` (amounts only).
        public var currency: String?
        /// Counts and gauges of counts; the numerator of a ratio.
        public var count: Int64?
        /// Amounts in milliunits of ``currency``.
        public var amount: Int64?
        /// A ratio's denominator.
        public var denominator: Int64?
        /// Whether ``amount`` is a total converted to the reporting currency.
        public var isConverted: Bool

        /// Creates a point.
        public init(
            start: AnalyticsDay, end: AnalyticsDay, group: String?, currency: String?, count: Int64? = nil, amount: Int64? = nil,
            denominator: Int64? = nil, isConverted: Bool = false
        ) {
            self.start = start
            self.end = end
            self.group = group
            self.currency = currency
            self.count = count
            self.amount = amount
            self.denominator = denominator
            self.isConverted = isConverted
        }

        /// A ratio's value (`nil` when its denominator is zero).
        public var ratio: Double? {
            guard let count, let denominator, denominator != 0 else { return nil }
            return Double(count) / Double(denominator)
        }

        /// The figure as a number: a count, an amount in units of its currency, or a ratio.
        public var value: Double? {
            if denominator != nil { return ratio }
            if let amount { return Double(amount) / 1000 }
            return count.map(Double.init)
        }
    }

    /// A rate a converted total used.
    public struct RateUsed: Sendable, Hashable, Comparable {
        /// The converted currency.
        public var currency: String
        /// The date the rate is from.
        public var day: AnalyticsDay
        /// Units of the reporting currency per unit.
        public var rate: Double

        public static func < (lhs: RateUsed, rhs: RateUsed) -> Bool { (lhs.currency, lhs.day) < (rhs.currency, rhs.day) }
    }

    /// The query answered (its `to` clipped to today).
    public var query: AnalyticsQuery
    /// The points, by bucket, then group, then currency (converted totals last).
    public var points: [Point]
    /// Transactions in the range whose price is unknown (amount metrics): the amounts leave
    /// them out.
    public var unpricedTransactions: Int64?
    /// The reporting currency of converted totals, when exchange rates were given.
    public var reportingCurrency: String?
    /// Every rate the converted totals used.
    public var ratesUsed: [RateUsed]
    /// Currencies some amount of which had no rate on its day: converted totals leave those
    /// amounts out.
    public var missingRates: [String]
}

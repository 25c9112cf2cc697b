/// A metric StoreGate computes from the daily rollups; docs/analytics.md gives each one's
/// formula and the platform definition it follows.
public enum AnalyticsMetric: String, Sendable, Hashable, Codable, CaseIterable {
    /// Paid subscription periods covering the end of the bucket's last day (trials excluded).
    case activeSubscriptions = "active_subscriptions"
    /// Free-trial periods covering the end of the bucket's last day.
    case activeTrials = "active_trials"
    /// Monthly recurring revenue at the end of the bucket's last day: each active paid
    /// period's price normalized to a month, per currency.
    case mrr
    /// Free trials that began.
    case newTrials = "new_trials"
    /// Free trials followed without a gap by a paid period (dated at the trial's end).
    case trialConversions = "trial_conversions"
    /// Trial conversions ÷ trials that ended, in the bucket.
    case trialConversionRate = "trial_conversion_rate"
    /// First paid periods of purchase families (direct purchases and trial conversions).
    case newPaidSubscriptions = "new_paid_subscriptions"
    /// Paid periods renewing a paid period.
    case renewals
    /// Paid subscriptions that lapsed, for any reason.
    case churned
    /// Paid subscriptions that lapsed after the customer turned off renewal.
    case churnedVoluntary = "churned_voluntary"
    /// Paid subscriptions that lapsed because billing failed.
    case churnedBilling = "churned_billing"
    /// Paid subscriptions that began again after lapsing.
    case reactivations
    /// Refunds and revocations (upgrades excluded).
    case refunds
    /// The refunded amount, per currency.
    case refundAmount = "refund_amount"
    /// The price × quantity of every transaction with a known price, per currency.
    case grossRevenue = "gross_revenue"
    /// (Gross revenue − refunded amount) × (1 − Apple's commission rate of each product).
    case estimatedProceeds = "estimated_proceeds"
    /// Transactions whose price is unknown (counted, never guessed).
    case unpricedTransactions = "unpriced_transactions"

    /// How a metric's figures combine over a bucket.
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A count at the end of the bucket (sums every earlier day's changes).
        case gaugeCount = "gauge_count"
        /// An amount per currency at the end of the bucket.
        case gaugeAmount = "gauge_amount"
        /// A count of events in the bucket.
        case count
        /// An amount per currency of events in the bucket.
        case amount
        /// A ratio of two counts in the bucket.
        case ratio
    }

    /// How the metric's figures combine.
    public var kind: Kind {
        switch self {
        case .activeSubscriptions, .activeTrials: .gaugeCount
        case .mrr: .gaugeAmount
        case .refundAmount, .grossRevenue, .estimatedProceeds: .amount
        case .trialConversionRate: .ratio
        default: .count
        }
    }

    /// Whether the metric is an amount of money (always per currency).
    public var isAmount: Bool { kind == .gaugeAmount || kind == .amount }

    /// The measures added (`plus`) and subtracted (`minus`) to make the metric; for a ratio,
    /// `plus` is the numerator and `minus` the denominator.
    public var measures: (plus: [RollupMeasure], minus: [RollupMeasure]) {
        switch self {
        case .activeSubscriptions, .mrr: ([.paidStarts], [.paidEnds])
        case .activeTrials: ([.trialStarts], [.trialEnds])
        case .newTrials: ([.trialStarts], [])
        case .trialConversions: ([.conversions], [])
        case .trialConversionRate: ([.conversions], [.trialEnds])
        case .newPaidSubscriptions: ([.newPaid], [])
        case .renewals: ([.renewals], [])
        case .churned: ([.churnVoluntary, .churnBilling, .churnRefund, .churnOther], [])
        case .churnedVoluntary: ([.churnVoluntary], [])
        case .churnedBilling: ([.churnBilling], [])
        case .reactivations: ([.reactivations], [])
        case .refunds, .refundAmount: ([.refunds], [])
        case .grossRevenue: ([.revenue], [])
        case .estimatedProceeds: ([.revenue], [.refunds])
        case .unpricedTransactions: ([.unpriced], [])
        }
    }
}

/// The length of the buckets of a metric's series.
public enum AnalyticsInterval: String, Sendable, Hashable, Codable, CaseIterable {
    /// UTC days.
    case day
    /// ISO weeks, Monday to Sunday (UTC).
    case week
    /// Calendar months (UTC).
    case month
}

/// What a metric's series is split by (besides currency, which amounts always are).
public enum AnalyticsGrouping: String, Sendable, Hashable, Codable, CaseIterable {
    /// The product id.
    case product
    /// The subscription group.
    case subscriptionGroup = "subscription_group"
    /// Apple's storefront (three-letter country or region code).
    case storefront
    /// The currency.
    case currency
    /// The offer (``RollupKey/offer(of:)``).
    case offer

    /// The key's value of this dimension.
    public func value(of key: RollupKey) -> String {
        switch self {
        case .product: key.productId
        case .subscriptionGroup: key.subscriptionGroup
        case .storefront: key.storefront
        case .currency: key.currency
        case .offer: key.offer
        }
    }
}

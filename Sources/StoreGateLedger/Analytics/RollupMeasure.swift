/// What one daily rollup counts: the unit the analytics metrics are summed from
/// (``AnalyticsMetric`` says which measures make which metric).
///
/// Each measure has a count and an amount (milliunits of the rollup's currency; zero where
/// money does not apply). Stored by raw value: a released raw value never changes.
public enum RollupMeasure: String, Sendable, Hashable, Codable, CaseIterable, Comparable {
    /// A transaction with a known price above zero: count, and price × quantity.
    case revenue
    /// A transaction whose price is unknown (app receipts; signed data without a price).
    case unpriced
    /// A refund or revocation (not an upgrade's): count, and the refunded price × quantity
    /// (zero when the price is unknown).
    case refunds
    /// A paid subscription period began: count, and its price normalized to a month (MRR).
    case paidStarts = "paid_starts"
    /// A paid subscription period ended (expiry, refund, upgrade): count, and the same MRR.
    case paidEnds = "paid_ends"
    /// A free-trial period began (a new trial).
    case trialStarts = "trial_starts"
    /// A free-trial period ended (converted or not).
    case trialEnds = "trial_ends"
    /// A free trial was followed, without a gap, by a paid period (dated at the trial's end).
    case conversions
    /// A purchase family's first paid period.
    case newPaid = "new_paid"
    /// A paid period renewing the paid period before it (not a trial conversion, not a
    /// product change the customer bought).
    case renewals
    /// A family's paid subscription began again after it had lapsed.
    case reactivations
    /// A paid subscription lapsed and the customer had turned off renewal.
    case churnVoluntary = "churn_voluntary"
    /// A paid subscription lapsed because billing failed.
    case churnBilling = "churn_billing"
    /// A paid subscription ended because Apple refunded or revoked its last period.
    case churnRefund = "churn_refund"
    /// A paid subscription lapsed for another or an unknown reason.
    case churnOther = "churn_other"

    /// By name (the raw value), the order of the rollups' primary key.
    public static func < (lhs: RollupMeasure, rhs: RollupMeasure) -> Bool { lhs.nameRank < rhs.nameRank }

    /// The measure's place among the measures ordered by name: comparing two measures compares
    /// two numbers, not two names (a fold sorts thousands of rollups by key). A test checks it
    /// against the names' order.
    var nameRank: UInt8 {
        switch self {
        case .churnBilling: 0
        case .churnOther: 1
        case .churnRefund: 2
        case .churnVoluntary: 3
        case .conversions: 4
        case .newPaid: 5
        case .paidEnds: 6
        case .paidStarts: 7
        case .reactivations: 8
        case .refunds: 9
        case .renewals: 10
        case .revenue: 11
        case .trialEnds: 12
        case .trialStarts: 13
        case .unpriced: 14
        }
    }
}

/// How a subscription with a commitment is billed (App Store Server API 1.21).
///
/// Apple's `billingPlanType` (a transaction) and `renewalBillingPlanType` /
/// `commitmentRenewalBillingPlanType` (a renewal info; Apple's `RenewalBillingPlanType`, the
/// same values). Unknown values are kept as their raw value, never dropped.
public struct BillingPlanType: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: String

    /// Wraps a value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The whole commitment is billed at once, up front.
    public static let billedUpfront = BillingPlanType(rawValue: "BILLED_UPFRONT")

    /// The commitment is billed every month.
    public static let monthly = BillingPlanType(rawValue: "MONTHLY")
}

/// Why the customer asked for a refund, in a `CONSUMPTION_REQUEST` notification.
///
/// Apple's `consumptionRequestReason`. Unknown values are kept as their raw value, never dropped.
public struct ConsumptionRequestReason: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: String

    /// Wraps a value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// `UNINTENDED_PURCHASE`.
    public static let unintendedPurchase = ConsumptionRequestReason(rawValue: "UNINTENDED_PURCHASE")

    /// `FULFILLMENT_ISSUE`.
    public static let fulfillmentIssue = ConsumptionRequestReason(rawValue: "FULFILLMENT_ISSUE")

    /// `UNSATISFIED_WITH_PURCHASE`.
    public static let unsatisfiedWithPurchase = ConsumptionRequestReason(rawValue: "UNSATISFIED_WITH_PURCHASE")

    /// `LEGAL`.
    public static let legal = ConsumptionRequestReason(rawValue: "LEGAL")

    /// `OTHER`.
    public static let other = ConsumptionRequestReason(rawValue: "OTHER")
}

/// The payment mode of a subscription offer.
///
/// Apple's `offerDiscountType`. Unknown values are kept as their raw value, never dropped.
public struct OfferDiscountType: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: String

    /// Wraps a value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A free trial.
    public static let freeTrial = OfferDiscountType(rawValue: "FREE_TRIAL")

    /// A discount paid every period.
    public static let payAsYouGo = OfferDiscountType(rawValue: "PAY_AS_YOU_GO")

    /// A discount paid once, up front.
    public static let payUpFront = OfferDiscountType(rawValue: "PAY_UP_FRONT")

    /// A one-time offer.
    public static let oneTime = OfferDiscountType(rawValue: "ONE_TIME")
}

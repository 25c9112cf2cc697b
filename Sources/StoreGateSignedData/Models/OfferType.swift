/// The kind of subscription offer applied.
///
/// Apple's `offerType`. Unknown values are kept as their raw value, never dropped.
public struct OfferType: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: Int

    /// Wraps a value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// An introductory offer.
    public static let introductoryOffer = OfferType(rawValue: 1)

    /// A promotional offer.
    public static let promotionalOffer = OfferType(rawValue: 2)

    /// An offer with a subscription offer code.
    public static let offerCode = OfferType(rawValue: 3)

    /// A win-back offer.
    public static let winBackOffer = OfferType(rawValue: 4)
}

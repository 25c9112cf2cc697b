/// Whether the customer has responded to a subscription price increase.
///
/// Apple's `priceIncreaseStatus`. Unknown values are kept as their raw value, never dropped.
public struct PriceIncreaseStatus: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: Int

    /// Wraps a value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// The customer has not responded to a price increase that needs consent.
    public static let customerHasNotResponded = PriceIncreaseStatus(rawValue: 0)

    /// The customer consented, or was notified of an increase that needs no consent.
    public static let customerConsentedOrWasNotifiedWithoutNeedingConsent = PriceIncreaseStatus(rawValue: 1)
}

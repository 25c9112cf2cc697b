/// The status of an auto-renewable subscription in a notification's `data` (Apple's `Status`).
///
/// Apple's `status`. Unknown values are kept as their raw value, never dropped.
public struct SubscriptionStatus: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: Int

    /// Wraps a value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Active.
    public static let active = SubscriptionStatus(rawValue: 1)

    /// Expired.
    public static let expired = SubscriptionStatus(rawValue: 2)

    /// In the billing retry period.
    public static let billingRetry = SubscriptionStatus(rawValue: 3)

    /// In the billing grace period.
    public static let billingGracePeriod = SubscriptionStatus(rawValue: 4)

    /// Revoked.
    public static let revoked = SubscriptionStatus(rawValue: 5)
}

/// Whether an auto-renewable subscription will renew.
///
/// Apple's `autoRenewStatus`. Unknown values are kept as their raw value, never dropped.
public struct AutoRenewStatus: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: Int

    /// Wraps a value, known or not.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// Automatic renewal is off.
    public static let off = AutoRenewStatus(rawValue: 0)

    /// Automatic renewal is on.
    public static let on = AutoRenewStatus(rawValue: 1)
}

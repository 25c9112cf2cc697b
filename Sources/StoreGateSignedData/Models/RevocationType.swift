/// How a transaction was revoked.
///
/// Apple's `revocationType`. Unknown values are kept as their raw value, never dropped.
public struct RevocationType: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: String

    /// Wraps a value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A full refund.
    public static let refundFull = RevocationType(rawValue: "REFUND_FULL")

    /// A prorated refund.
    public static let refundProrated = RevocationType(rawValue: "REFUND_PRORATED")

    /// Family Sharing access was removed.
    public static let familyRevoke = RevocationType(rawValue: "FAMILY_REVOKE")
}

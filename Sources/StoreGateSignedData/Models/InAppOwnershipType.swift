/// Whether the customer bought the product or has access to it through Family Sharing.
///
/// Apple's `inAppOwnershipType`. Unknown values are kept as their raw value, never dropped.
public struct InAppOwnershipType: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: String

    /// Wraps a value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// A family member has access through Family Sharing.
    public static let familyShared = InAppOwnershipType(rawValue: "FAMILY_SHARED")

    /// The customer bought it.
    public static let purchased = InAppOwnershipType(rawValue: "PURCHASED")
}

/// Why a transaction happened: a purchase by the customer or an automatic renewal.
///
/// Apple's `transactionReason`. Unknown values are kept as their raw value, never dropped.
public struct TransactionReason: AppleEnumeration {
    /// The value as Apple writes it.
    public let rawValue: String

    /// Wraps a value, known or not.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    /// The customer bought the product (or restored, upgraded, crossgraded).
    public static let purchase = TransactionReason(rawValue: "PURCHASE")

    /// The App Store renewed a subscription.
    public static let renewal = TransactionReason(rawValue: "RENEWAL")
}

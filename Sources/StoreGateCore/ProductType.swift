/// The kind of an in-app product, with Apple's spelling (`type` in a signed transaction).
///
/// App receipts do not carry the product type; the ledger's product catalog supplies it.
/// Unknown values are kept as their raw string.
public struct ProductType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public static let consumable = ProductType(rawValue: "Consumable")
    public static let nonConsumable = ProductType(rawValue: "Non-Consumable")
    public static let autoRenewable = ProductType(rawValue: "Auto-Renewable Subscription")
    public static let nonRenewing = ProductType(rawValue: "Non-Renewing Subscription")

    public var description: String { rawValue }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

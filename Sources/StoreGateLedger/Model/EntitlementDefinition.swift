/// One of the app's entitlements, as the catalog defines it: what the app gates a feature by
/// ("pro", "ad_free", "coins"), and which products unlock it.
///
/// JSON form, under `entitlements` in the products file:
/// ```json
/// { "entitlements": {
///     "pro":   { "products": ["pro.monthly", "pro.yearly", "pro.lifetime"] },
///     "coins": { "currency": { "coins.100": 100, "coins.500": 500 } } } }
/// ```
///
/// A product may unlock several entitlements. A *currency* entitlement counts consumables:
/// each unit of a listed product is worth its amount, and the entitlement reports the balance
/// (active while it is above zero).
public struct EntitlementDefinition: Sendable, Hashable, Codable {
    /// The products that unlock it (a currency's products, for a currency).
    public var products: [String]
    /// For a currency: each consumable's worth per unit.
    public var currency: [String: Int]?

    /// An entitlement unlocked by `products`.
    public init(products: [String]) {
        self.products = products
        self.currency = nil
    }

    /// A currency counting `amounts` per unit of each consumable.
    public init(currency amounts: [String: Int]) {
        self.products = amounts.keys.sorted()
        self.currency = amounts
    }

    /// Whether it counts consumables.
    public var isCurrency: Bool { currency != nil }

    enum CodingKeys: String, CodingKey {
        case products, currency
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let currency = try container.decodeIfPresent([String: Int].self, forKey: .currency)
        let products = try container.decodeIfPresent([String].self, forKey: .products)
        self.currency = currency
        self.products = products ?? currency.map { $0.keys.sorted() } ?? []
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        if let currency {
            try container.encode(currency, forKey: .currency)
        } else {
            try container.encode(products, forKey: .products)
        }
    }
}

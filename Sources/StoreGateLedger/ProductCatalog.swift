public import Foundation
public import StoreGateCore

/// What the ledger knows about the app's products: their type and subscription group.
///
/// StoreKit 2 transactions name their product type and subscription group; app receipts do
/// not. For a transaction without them the catalog decides:
///
/// - type: the catalog's entry; when the product is not in the catalog, an expiry date means
///   an auto-renewable subscription, otherwise a non-consumable (so an unknown product is
///   never counted as a consumable that could be spent);
/// - subscription group: the catalog's entry; otherwise the product id itself, so each
///   unknown subscription product is its own group.
///
/// A type or group that Apple states in a signed transaction always wins over the catalog.
///
/// The catalog also maps products to the app's *entitlements* (``EntitlementDefinition``):
/// entitlements are derived from the ledger's facts when they are read
/// (``EntitlementResolver``), so a changed mapping applies to every customer at once.
///
/// JSON form (for configuration files; both sections are optional):
/// ```json
/// { "products": { "coins.100": { "type": "Consumable" },
///                 "pro.monthly": { "type": "Auto-Renewable Subscription", "subscriptionGroup": "pro" } },
///   "entitlements": { "pro": { "products": ["pro.monthly", "pro.lifetime"] },
///                     "coins": { "currency": { "coins.100": 100 } } } }
/// ```
public struct ProductCatalog: Sendable, Hashable, Codable {
    /// One product's description.
    public struct Product: Sendable, Hashable, Codable {
        /// Apple's product type.
        public var type: ProductType
        /// The subscription group of an auto-renewable subscription.
        public var subscriptionGroup: String?

        /// Describes a product.
        public init(type: ProductType, subscriptionGroup: String? = nil) {
            self.type = type
            self.subscriptionGroup = subscriptionGroup
        }
    }

    /// The products, by product id.
    public var products: [String: Product]
    /// The app's entitlements, by identifier.
    public var entitlements: [String: EntitlementDefinition]

    /// A catalog of the given products and entitlements (empty by default: every product
    /// falls back, and no entitlement is defined).
    public init(products: [String: Product] = [:], entitlements: [String: EntitlementDefinition] = [:]) {
        self.products = products
        self.entitlements = entitlements
    }

    enum CodingKeys: String, CodingKey {
        case products, entitlements
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        products = try container.decodeIfPresent([String: Product].self, forKey: .products) ?? [:]
        entitlements = try container.decodeIfPresent([String: EntitlementDefinition].self, forKey: .entitlements) ?? [:]
    }

    /// Reads a catalog from its JSON form and checks it (``validate()``).
    ///
    /// - Throws: ``LedgerError/Code/invalidConfiguration`` when the JSON does not decode or
    ///   an entry is unusable; the reason names the entry.
    public init(json: [UInt8]) throws(LedgerError) {
        do {
            self = try JSONDecoder().decode(ProductCatalog.self, from: Data(json))
        } catch {
            throw LedgerError(.invalidConfiguration, reason: "the product catalog is not valid JSON: \(Self.describe(error))")
        }
        try validate()
    }

    /// The longest entitlement identifier.
    public static let maximumEntitlementLength = 64

    /// Checks every entry: an entitlement identifier is 1...64 of `a-z A-Z 0-9 . _ -`; it names
    /// at least one product, each a non-empty product id at most 256 bytes, none twice; a
    /// currency's amounts are positive and its products, when the catalog knows their type,
    /// are consumables; a product's subscription group is not empty.
    ///
    /// - Throws: ``LedgerError/Code/invalidConfiguration`` naming the first bad entry in one line.
    public func validate() throws(LedgerError) {
        func refuse(_ reason: String) -> LedgerError { LedgerError(.invalidConfiguration, reason: reason) }
        for (id, product) in products.sorted(by: { $0.key < $1.key }) {
            guard !id.isEmpty, id.utf8.count <= LedgerPlanner.maximumIdentifierLength else {
                throw refuse("product '\(id.prefix(40))': a product id has 1...\(LedgerPlanner.maximumIdentifierLength) bytes")
            }
            if let group = product.subscriptionGroup, group.isEmpty {
                throw refuse("product '\(id)': subscriptionGroup is empty (leave it out instead)")
            }
        }
        for (name, definition) in entitlements.sorted(by: { $0.key < $1.key }) {
            guard Self.isEntitlementIdentifier(name) else {
                throw refuse("entitlement '\(name.prefix(40))': an identifier has 1...\(Self.maximumEntitlementLength) characters from a-z A-Z 0-9 . _ -")
            }
            guard !definition.products.isEmpty else {
                throw refuse("entitlement '\(name)': it names no product (\"products\": [...] or \"currency\": {...})")
            }
            var seen: Set<String> = []
            for product in definition.products {
                guard !product.isEmpty, product.utf8.count <= LedgerPlanner.maximumIdentifierLength else {
                    throw refuse("entitlement '\(name)': a product id has 1...\(LedgerPlanner.maximumIdentifierLength) bytes")
                }
                guard seen.insert(product).inserted else { throw refuse("entitlement '\(name)': product '\(product)' is listed twice") }
            }
            if let currency = definition.currency {
                for (product, amount) in currency.sorted(by: { $0.key < $1.key }) {
                    guard amount > 0 else { throw refuse("entitlement '\(name)': currency amount of '\(product)' must be a positive integer, got \(amount)") }
                    if let type = products[product]?.type, type != .consumable {
                        throw refuse("entitlement '\(name)': product '\(product)' is a \(type), a currency counts consumables only")
                    }
                }
            }
        }
    }

    /// Whether `name` is a valid entitlement identifier.
    public static func isEntitlementIdentifier(_ name: String) -> Bool {
        (1...maximumEntitlementLength).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    /// The entitlements `productId` unlocks, by identifier.
    public func entitlements(unlockedBy productId: String) -> [String] {
        entitlements.filter { $0.value.products.contains(productId) }.map(\.key).sorted()
    }

    /// A decoding error in one line, naming where it failed.
    private static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return path.isEmpty ? "" : " at \(path)"
        }
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context):
            return "\(context.debugDescription)\(path(context))"
        case .keyNotFound(let key, let context):
            return "'\(key.stringValue)' is missing\(path(context))"
        @unknown default:
            return "\(error)"
        }
    }

    /// The product type to record for a transaction of `productId`.
    ///
    /// - Parameters:
    ///   - productId: The product.
    ///   - stated: The type Apple stated in the transaction, if any; it wins.
    ///   - expiresDate: The transaction's expiry date, used when the product is unknown.
    public func productType(for productId: String, stated: ProductType?, expiresDate: Date?) -> ProductType {
        if let stated { return stated }
        if let known = products[productId]?.type { return known }
        return expiresDate == nil ? .nonConsumable : .autoRenewable
    }

    /// The subscription group to record for a transaction of `productId`.
    ///
    /// - Parameters:
    ///   - productId: The product.
    ///   - stated: The group Apple stated in the transaction, if any; it wins.
    public func subscriptionGroup(for productId: String, stated: String?) -> String {
        if let stated, !stated.isEmpty { return stated }
        if let known = products[productId]?.subscriptionGroup, !known.isEmpty { return known }
        return productId
    }
}

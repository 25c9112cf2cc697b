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
/// JSON form (for configuration files):
/// ```json
/// { "products": { "coins.100": { "type": "Consumable" },
///                 "pro.monthly": { "type": "Auto-Renewable Subscription", "subscriptionGroup": "pro" } } }
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

    /// A catalog of the given products (empty by default: every product falls back).
    public init(products: [String: Product] = [:]) {
        self.products = products
    }

    /// Reads a catalog from its JSON form.
    ///
    /// - Throws: ``LedgerError/Code/invalidConfiguration`` when the JSON does not decode.
    public init(json: [UInt8]) throws(LedgerError) {
        do {
            self = try JSONDecoder().decode(ProductCatalog.self, from: Data(json))
        } catch {
            throw LedgerError(.invalidConfiguration, reason: "the product catalog is not valid JSON: \(error)")
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

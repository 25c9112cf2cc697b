public import StoreGateCore

/// What an account holds of one product that is not an auto-renewable subscription:
/// a non-consumable, a non-renewing subscription, a consumable, or a product of a type the
/// ledger does not know (recorded, never entitling).
public struct ProductEntitlement: Sendable, Hashable, Codable {
    /// The product.
    public var productId: String
    /// Its type, as recorded.
    public var productType: ProductType
    /// Non-consumables and non-renewing subscriptions: at least one transaction that Apple has
    /// not refunded or revoked. Consumables: a positive available balance. Unknown types: never.
    public var isEntitled: Bool
    /// Consumables only: the balance.
    public var balance: ConsumableBalance?
    /// The transactions that decided it, by purchase date.
    public var transactions: [RecordedTransaction]
    /// The notifications about those transactions, by signing date.
    public var notifications: [RecordedNotification]
}

/// The balance of one consumable product for one account.
///
/// `purchased` counts units of transactions Apple has not refunded; `refunded` counts units
/// Apple refunded. When Apple refunds units that were already consumed, `consumed` exceeds
/// `purchased`: the difference is ``refundDebt`` — recorded and reported, never dropped.
public struct ConsumableBalance: Sendable, Hashable, Codable {
    /// The product.
    public var productId: String
    /// Units bought and not refunded.
    public var purchased: Int
    /// Units Apple refunded or revoked.
    public var refunded: Int
    /// Units consumed.
    public var consumed: Int

    /// Creates a balance.
    public init(productId: String, purchased: Int, refunded: Int, consumed: Int) {
        self.productId = productId
        self.purchased = purchased
        self.refunded = refunded
        self.consumed = consumed
    }

    /// Units that may still be consumed (never negative).
    public var available: Int { max(0, purchased - consumed) }

    /// Units consumed beyond what remains purchased after refunds: refunds of units the
    /// customer had already used.
    public var refundDebt: Int { max(0, consumed - purchased) }
}

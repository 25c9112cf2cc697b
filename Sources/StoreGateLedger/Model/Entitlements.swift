public import Foundation

/// Everything one account holds at one date: the answer to "what does this customer own
/// right now?".
public struct Entitlements: Sendable, Hashable, Codable {
    /// The account.
    public var account: AccountID
    /// The date the time-dependent states were computed for.
    public var date: Date
    /// Non-consumables, by product id (including refunded ones, with `isEntitled` false).
    public var nonConsumables: [ProductEntitlement]
    /// Non-renewing subscriptions, by product id. Their duration is the app's business.
    public var nonRenewingSubscriptions: [ProductEntitlement]
    /// Consumables with their balances, by product id.
    public var consumables: [ProductEntitlement]
    /// Auto-renewable subscriptions, one per subscription group.
    public var subscriptions: [SubscriptionEntitlement]
    /// Products of a type the ledger does not know: recorded, never entitling.
    public var otherProducts: [ProductEntitlement]

    /// The ids of the non-consumables the account owns.
    public var ownedNonConsumables: [String] {
        nonConsumables.filter(\.isEntitled).map(\.productId)
    }

    /// Whether the account is entitled to `productId`: an owned non-consumable or
    /// non-renewing subscription, a consumable with a positive balance, or the product of an
    /// entitling subscription.
    public func isEntitled(to productId: String) -> Bool {
        for list in [nonConsumables, nonRenewingSubscriptions, consumables] {
            if list.contains(where: { $0.productId == productId && $0.isEntitled }) { return true }
        }
        return subscriptions.contains { $0.isEntitled && $0.productId == productId }
    }

    /// The available balance of a consumable (0 when unknown).
    public func balance(of productId: String) -> Int {
        consumables.first { $0.productId == productId }?.balance?.available ?? 0
    }

    /// The subscription state of a group, if the account ever subscribed in it.
    public func subscription(inGroup group: String) -> SubscriptionEntitlement? {
        subscriptions.first { $0.subscriptionGroup == group }
    }
}

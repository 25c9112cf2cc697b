public import Foundation

/// Derives an account's entitlements from what it holds (``Entitlements``), the catalog's
/// mapping and its grants: pure, the same on every backend, and applied when read, so a
/// changed catalog applies to every account at once.
///
/// - A non-consumable unlocks while it stands (not refunded); a consumable while units are
///   left; a currency reports its balance and is active while it is above zero.
/// - A non-renewing subscription unlocks while a standing transaction's period covers the
///   date (or forever, when it states no end).
/// - An auto-renewable subscription unlocks through the product of its deciding transaction,
///   while its state entitles (active or in Apple's grace period), until its period's end (the
///   grace period's end during one).
/// - A grant unlocks from its start until its end or revocation.
public enum EntitlementResolver {
    /// Every entitlement of the catalog for the account, by identifier.
    ///
    /// - Parameters:
    ///   - holdings: What the account holds (``Ledger/entitlements(for:at:)``).
    ///   - catalog: The mapping of products to entitlements.
    ///   - grants: The account's grants.
    ///   - date: The date the answer is for (the holdings' date).
    public static func resolve(
        _ holdings: Entitlements, catalog: ProductCatalog, grants: [EntitlementGrant] = [], at date: Date
    ) -> [Entitlement] {
        let sources = Sources(holdings, at: date)
        return catalog.entitlements.keys.sorted().compactMap { identifier in
            resolve(identifier, holdings: holdings, sources: sources, catalog: catalog, grants: grants, at: date)
        }
    }

    /// One entitlement for the account (`nil` when the catalog does not define it).
    public static func resolve(
        _ identifier: String, holdings: Entitlements, catalog: ProductCatalog, grants: [EntitlementGrant] = [], at date: Date
    ) -> Entitlement? {
        resolve(identifier, holdings: holdings, sources: Sources(holdings, at: date), catalog: catalog, grants: grants, at: date)
    }

    private static func resolve(
        _ identifier: String, holdings: Entitlements, sources: Sources, catalog: ProductCatalog, grants: [EntitlementGrant], at date: Date
    ) -> Entitlement? {
        guard let definition = catalog.entitlements[identifier] else { return nil }
        var found: [EntitlementSource] = []
        var balance: Int?
        if let currency = definition.currency {
            var total = 0
            for (product, amount) in currency.sorted(by: { $0.key < $1.key }) {
                guard let held = sources.consumables[product] else { continue }
                let available = held.balance?.available ?? 0
                total += available.multipliedReportingOverflow(by: amount).partialValue
                found.append(EntitlementSource(
                    kind: .product, isActive: available > 0, expiresAt: nil, productId: product,
                    transactionId: held.transactions.last?.transactionId, originalTransactionId: held.transactions.last?.originalTransactionId,
                    environment: held.transactions.last?.environment
                ))
            }
            balance = max(0, total)
        } else {
            for product in definition.products {
                found += sources.of(product)
            }
        }
        for grant in grants where grant.entitlement == identifier {
            found.append(EntitlementSource(kind: .grant, isActive: grant.isActive(at: date), expiresAt: grant.endsAt, grantId: grant.id))
        }
        found.sort { $0.isStronger(than: $1) }
        let strongest = found.first
        let isActive = balance.map { $0 > 0 } ?? (strongest?.isActive ?? false)
        return Entitlement(
            identifier: identifier, isActive: isActive, expiresAt: strongest?.expiresAt, willRenew: strongest?.willRenew,
            subscriptionState: strongest?.subscriptionState, periodType: strongest?.periodType, balance: balance, source: strongest,
            otherSources: Array(found.dropFirst())
        )
    }

    /// The account's holdings by product, each as the sources it can give.
    private struct Sources {
        var nonConsumables: [String: ProductEntitlement] = [:]
        var nonRenewing: [String: ProductEntitlement] = [:]
        var consumables: [String: ProductEntitlement] = [:]
        var subscriptions: [String: [SubscriptionEntitlement]] = [:]
        let date: Date

        init(_ holdings: Entitlements, at date: Date) {
            self.date = date
            for product in holdings.nonConsumables { nonConsumables[product.productId] = product }
            for product in holdings.nonRenewingSubscriptions { nonRenewing[product.productId] = product }
            for product in holdings.consumables { consumables[product.productId] = product }
            for subscription in holdings.subscriptions { subscriptions[subscription.productId, default: []].append(subscription) }
        }

        func of(_ product: String) -> [EntitlementSource] {
            var found: [EntitlementSource] = []
            if let held = nonConsumables[product] {
                let standing = held.transactions.first { !$0.isRevoked } ?? held.transactions.last
                found.append(EntitlementSource(
                    kind: .product, isActive: held.isEntitled, expiresAt: nil, productId: product, transactionId: standing?.transactionId,
                    originalTransactionId: standing?.originalTransactionId, environment: standing?.environment
                ))
            }
            if let held = consumables[product] {
                let last = held.transactions.last
                found.append(EntitlementSource(
                    kind: .product, isActive: (held.balance?.available ?? 0) > 0, expiresAt: nil, productId: product,
                    transactionId: last?.transactionId, originalTransactionId: last?.originalTransactionId, environment: last?.environment
                ))
            }
            if let held = nonRenewing[product] {
                // The standing period that lasts longest (no end: for good).
                let standing = held.transactions.filter { !$0.isRevoked }
                let deciding = standing.max { lhs, rhs in
                    switch (lhs.expiresDate, rhs.expiresDate) {
                    case (nil, _): false
                    case (_, nil): true
                    case (let l?, let r?): l < r
                    }
                } ?? held.transactions.last
                if let deciding {
                    let active = !deciding.isRevoked && deciding.purchaseDate <= date && (deciding.expiresDate.map { $0 > date } ?? true)
                    found.append(EntitlementSource(
                        kind: .transaction, isActive: active, expiresAt: deciding.expiresDate, productId: product,
                        transactionId: deciding.transactionId, originalTransactionId: deciding.originalTransactionId,
                        environment: deciding.environment
                    ))
                }
            }
            for subscription in subscriptions[product] ?? [] {
                let end = subscription.state == .inGracePeriod ? subscription.gracePeriodExpiresDate ?? subscription.expiresDate : subscription.expiresDate

                found.append(EntitlementSource(
                    kind: .transaction, isActive: subscription.isEntitled, expiresAt: end, productId: product,
                    transactionId: subscription.decidingTransactionId, originalTransactionId: subscription.originalTransactionId,
                    environment: subscription.environment, subscriptionState: subscription.state,
                    willRenew: subscription.willAutoRenew, periodType: subscription.periodType
                ))
            }
            return found
        }
    }
}

public import Foundation
import StoreGateCore

/// Everything stored about one account, as loaded by a backend for a query.
package struct AccountRecords: Sendable {
    /// The transactions the account owns.
    package var transactions: [RecordedTransaction]
    /// The latest renewal info of the account's families.
    package var renewals: [FamilyKey: RenewalRow]
    /// The notifications about the account's families.
    package var notifications: [RecordedNotification]
    /// The account's consumable counters.
    package var balances: [ConsumableBalance]

    package init(
        transactions: [RecordedTransaction] = [], renewals: [FamilyKey: RenewalRow] = [:],
        notifications: [RecordedNotification] = [], balances: [ConsumableBalance] = []
    ) {
        self.transactions = transactions
        self.renewals = renewals
        self.notifications = notifications
        self.balances = balances
    }
}

/// Turns an account's stored records into ``Entitlements`` at a date. Pure, shared by every
/// backend, so all of them answer the same question the same way.
package enum EntitlementCalculator {
    package static func entitlements(for account: AccountID, records: AccountRecords, at date: Date) -> Entitlements {
        let transactions = records.transactions.sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        let notifications = records.notifications.sorted { ($0.signedDate, $0.notificationUUID) < ($1.signedDate, $1.notificationUUID) }
        var byType: [ProductType: [String: [RecordedTransaction]]] = [:]
        var groups: [String: [RecordedTransaction]] = [:]
        for transaction in transactions {
            if transaction.productType == .autoRenewable {
                groups[transaction.subscriptionGroup, default: []].append(transaction)
            } else {
                byType[transaction.productType, default: [:]][transaction.productId, default: []].append(transaction)
            }
        }
        let balances = Dictionary(records.balances.map { ($0.productId, $0) }, uniquingKeysWith: { first, _ in first })

        func products(_ type: ProductType) -> [ProductEntitlement] {
            (byType[type] ?? [:]).keys.sorted().map { productId in
                let list = byType[type]?[productId] ?? []
                return ProductEntitlement(
                    productId: productId,
                    productType: type,
                    isEntitled: list.contains { !$0.isRevoked },
                    balance: nil,
                    transactions: list,
                    notifications: related(notifications, to: list)
                )
            }
        }

        let consumableIds = Set((byType[.consumable] ?? [:]).keys).union(balances.keys).sorted()
        let consumables = consumableIds.map { productId in
            let list = byType[.consumable]?[productId] ?? []
            let balance = balances[productId] ?? ConsumableBalance(productId: productId, purchased: 0, refunded: 0, consumed: 0)
            return ProductEntitlement(
                productId: productId,
                productType: .consumable,
                isEntitled: balance.available > 0,
                balance: balance,
                transactions: list,
                notifications: related(notifications, to: list)
            )
        }

        let known: Set<ProductType> = [.consumable, .nonConsumable, .nonRenewing, .autoRenewable]
        let others = byType.keys.filter { !known.contains($0) }.sorted { $0.rawValue < $1.rawValue }.flatMap { type in
            products(type).map { entitlement -> ProductEntitlement in
                var copy = entitlement
                copy.isEntitled = false
                return copy
            }
        }

        return Entitlements(
            account: account,
            date: date,
            nonConsumables: products(.nonConsumable),
            nonRenewingSubscriptions: products(.nonRenewing),
            consumables: consumables,
            subscriptions: groups.keys.sorted().compactMap { group in
                subscription(group: group, transactions: groups[group] ?? [], renewals: records.renewals, notifications: notifications, at: date)
            },
            otherProducts: others
        )
    }

    /// The first instant after `date` at which ``entitlements(for:records:at:)`` may answer
    /// differently, or `nil` when no later instant changes anything.
    ///
    /// The calculation compares its date with two kinds of stored dates only: a transaction's
    /// `expiresDate` and a renewal's `gracePeriodExpiresDate` (each `stored > date`). Between
    /// `date` and the first of those later than it every comparison keeps its outcome, so the
    /// holdings computed at `date` hold, but for their own `date`, until the instant returned.
    /// A change to what the calculation compares must change this too
    /// (`EntitlementCalculatorWindowTests` checks the two agree on random records).
    package static func nextChange(after date: Date, records: AccountRecords) -> Date? {
        var next: Date?
        func consider(_ candidate: Date?) {
            guard let candidate, candidate > date else { return }
            if let current = next, current <= candidate { return }
            next = candidate
        }
        for transaction in records.transactions { consider(transaction.expiresDate) }
        for renewal in records.renewals.values { consider(renewal.gracePeriodExpiresDate) }
        return next
    }

    /// The state of one subscription group.
    ///
    /// A period that Apple has not refunded, revoked or replaced by an upgrade and that covers
    /// `date` makes it ``SubscriptionEntitlement/State/active`` (the latest such period decides).
    /// Otherwise the most recent transaction decides: revoked, upgraded, or — from its
    /// family's latest renewal info — in grace period, in billing retry, or expired.
    static func subscription(
        group: String, transactions: [RecordedTransaction], renewals: [FamilyKey: RenewalRow],
        notifications: [RecordedNotification], at date: Date
    ) -> SubscriptionEntitlement? {
        let active = transactions.filter { transaction in
            guard !transaction.isRevoked, !transaction.isUpgraded, let expires = transaction.expiresDate else { return false }
            return expires > date
        }
        let byRecency: (RecordedTransaction, RecordedTransaction) -> Bool = { lhs, rhs in
            (lhs.purchaseDate, lhs.expiresDate ?? .distantPast, lhs.transactionId)
                < (rhs.purchaseDate, rhs.expiresDate ?? .distantPast, rhs.transactionId)
        }
        let deciding: RecordedTransaction
        let state: SubscriptionEntitlement.State
        let renewalOfDeciding: RenewalRow?
        if let best = active.max(by: { lhs, rhs in
            ((lhs.expiresDate ?? .distantPast), lhs.purchaseDate, lhs.transactionId)
                < ((rhs.expiresDate ?? .distantPast), rhs.purchaseDate, rhs.transactionId)
        }) {
            deciding = best
            state = .active
            renewalOfDeciding = renewals[FamilyKey(environment: best.environment, originalTransactionId: best.originalTransactionId)]
        } else if let latest = transactions.max(by: byRecency) {
            deciding = latest
            let renewal = renewals[FamilyKey(environment: latest.environment, originalTransactionId: latest.originalTransactionId)]
            renewalOfDeciding = renewal
            if latest.isRevoked {
                state = .revoked
            } else if latest.isUpgraded {
                state = .upgraded
            } else if let renewal, renewal.isInBillingRetryPeriod {
                if let grace = renewal.gracePeriodExpiresDate, grace > date {
                    state = .inGracePeriod
                } else {
                    state = .inBillingRetry
                }
            } else {
                state = .expired
            }
        } else {
            return nil
        }
        let families = Set(transactions.map { FamilyKey(environment: $0.environment, originalTransactionId: $0.originalTransactionId) })
        return SubscriptionEntitlement(
            subscriptionGroup: group,
            state: state,
            productId: deciding.productId,
            environment: deciding.environment,
            originalTransactionId: deciding.originalTransactionId,
            decidingTransactionId: deciding.transactionId,
            expiresDate: deciding.expiresDate,
            willAutoRenew: renewalOfDeciding?.willAutoRenew,
            autoRenewProductId: renewalOfDeciding?.autoRenewProductId,
            isInBillingRetryPeriod: renewalOfDeciding?.isInBillingRetryPeriod ?? false,
            gracePeriodExpiresDate: renewalOfDeciding?.gracePeriodExpiresDate,
            expirationIntent: renewalOfDeciding?.expirationIntent,
            transactions: transactions,
            notifications: notifications.filter { notification in
                guard let original = notification.originalTransactionId else { return false }
                return families.contains(FamilyKey(environment: notification.environment, originalTransactionId: original))
            }
        )
    }

    /// The notifications about any of `transactions`.
    static func related(_ notifications: [RecordedNotification], to transactions: [RecordedTransaction]) -> [RecordedNotification] {
        guard !notifications.isEmpty, !transactions.isEmpty else { return [] }
        let ids = Set(transactions.map { TransactionKey(environment: $0.environment, transactionId: $0.transactionId) })
        return notifications.filter { notification in
            guard let id = notification.transactionId else { return false }
            return ids.contains(TransactionKey(environment: notification.environment, transactionId: id))
        }
    }
}

import Foundation
import StoreGateCore
import StoreGateLedger

/// The wire form of an account's entitlements (`Entitlements` in the OpenAPI document).
///
/// A stable mapping of the ledger's model: the service's JSON does not change when the
/// ledger's Swift types do.
struct EntitlementsReply: Encodable {
    let account: String
    /// When the time-dependent states were computed.
    let asOf: Date
    /// Product ids the account is entitled to now, any type.
    let entitledProductIds: [String]
    let nonConsumables: [ProductReply]
    let nonRenewingSubscriptions: [ProductReply]
    let consumables: [ProductReply]
    let subscriptions: [SubscriptionReply]
    let otherProducts: [ProductReply]

    init(_ entitlements: Entitlements) {
        account = entitlements.account.rawValue
        asOf = entitlements.date
        nonConsumables = entitlements.nonConsumables.map(ProductReply.init)
        nonRenewingSubscriptions = entitlements.nonRenewingSubscriptions.map(ProductReply.init)
        consumables = entitlements.consumables.map(ProductReply.init)
        subscriptions = entitlements.subscriptions.map(SubscriptionReply.init)
        otherProducts = entitlements.otherProducts.map(ProductReply.init)
        var entitled: [String] = []
        for product in entitlements.nonConsumables + entitlements.nonRenewingSubscriptions + entitlements.consumables where product.isEntitled {
            entitled.append(product.productId)
        }
        for subscription in entitlements.subscriptions where subscription.isEntitled {
            entitled.append(subscription.productId)
        }
        entitledProductIds = Array(Set(entitled)).sorted()
    }
}

/// One non-subscription product (`ProductEntitlement`).
struct ProductReply: Encodable {
    let productId: String
    let productType: String
    let isEntitled: Bool
    let balance: BalanceReply?
    let transactions: [TransactionReply]
    let notifications: [NotificationSummaryReply]

    init(_ product: ProductEntitlement) {
        productId = product.productId
        productType = product.productType.rawValue
        isEntitled = product.isEntitled
        balance = product.balance.map(BalanceReply.init)
        transactions = product.transactions.map(TransactionReply.init)
        notifications = product.notifications.map(NotificationSummaryReply.init)
    }
}

/// A consumable's balance (`ConsumableBalance`).
struct BalanceReply: Encodable {
    let purchased: Int
    let refunded: Int
    let consumed: Int
    let available: Int
    let refundDebt: Int

    init(_ balance: ConsumableBalance) {
        purchased = balance.purchased
        refunded = balance.refunded
        consumed = balance.consumed
        available = balance.available
        refundDebt = balance.refundDebt
    }
}

/// One auto-renewable subscription group (`SubscriptionStatus`).
struct SubscriptionReply: Encodable {
    let subscriptionGroup: String
    let state: String
    let isEntitled: Bool
    let productId: String
    let environment: String
    let originalTransactionId: String
    let decidingTransactionId: String
    let expiresDate: Date?
    let willAutoRenew: Bool?
    let autoRenewProductId: String?
    let isInBillingRetryPeriod: Bool
    let gracePeriodExpiresDate: Date?
    let expirationIntent: Int?
    let transactions: [TransactionReply]
    let notifications: [NotificationSummaryReply]

    init(_ status: SubscriptionStatus) {
        subscriptionGroup = status.subscriptionGroup
        state = status.state.rawValue
        isEntitled = status.isEntitled
        productId = status.productId
        environment = status.environment.rawValue
        originalTransactionId = status.originalTransactionId
        decidingTransactionId = status.decidingTransactionId
        expiresDate = status.expiresDate
        willAutoRenew = status.willAutoRenew
        autoRenewProductId = status.autoRenewProductId
        isInBillingRetryPeriod = status.isInBillingRetryPeriod
        gracePeriodExpiresDate = status.gracePeriodExpiresDate
        expirationIntent = status.expirationIntent
        transactions = status.transactions.map(TransactionReply.init)
        notifications = status.notifications.map(NotificationSummaryReply.init)
    }
}

/// One recorded transaction (`RecordedTransaction`); the owning account is the one asked about.
struct TransactionReply: Encodable {
    let environment: String
    let transactionId: String
    let originalTransactionId: String
    let productId: String
    let productType: String
    let subscriptionGroup: String
    let quantity: Int
    let purchaseDate: Date
    let originalPurchaseDate: Date?
    let expiresDate: Date?
    let revocationDate: Date?
    let revocationReason: Int?
    let isRevoked: Bool
    let isUpgraded: Bool
    let webOrderLineItemId: String?
    let source: String
    let observedAt: Date

    init(_ transaction: RecordedTransaction) {
        environment = transaction.environment.rawValue
        transactionId = transaction.transactionId
        originalTransactionId = transaction.originalTransactionId
        productId = transaction.productId
        productType = transaction.productType.rawValue
        subscriptionGroup = transaction.subscriptionGroup
        quantity = transaction.quantity
        purchaseDate = transaction.purchaseDate
        originalPurchaseDate = transaction.originalPurchaseDate
        expiresDate = transaction.expiresDate
        revocationDate = transaction.revocationDate
        revocationReason = transaction.revocationReason
        isRevoked = transaction.isRevoked
        isUpgraded = transaction.isUpgraded
        webOrderLineItemId = transaction.webOrderLineItemId
        source = transaction.source.rawValue
        observedAt = transaction.observedAt
    }
}

/// A notification the ledger took (`NotificationSummary` of the ledger).
struct NotificationSummaryReply: Encodable {
    let notificationUUID: String
    let notificationType: String
    let subtype: String?
    let signedDate: Date
    let environment: String
    let transactionId: String?

    init(_ summary: StoreGateLedger.NotificationSummary) {
        notificationUUID = summary.notificationUUID
        notificationType = summary.notificationType
        subtype = summary.subtype
        signedDate = summary.signedDate
        environment = summary.environment.rawValue
        transactionId = summary.transactionId
    }
}

/// What recording a proof changed (`RecordOutcome`).
struct RecordedReply: Encodable {
    let newTransactionIds: [String]
    let updatedTransactionIds: [String]
    let unchangedTransactionIds: [String]
    let isDuplicate: Bool

    init(_ outcome: RecordOutcome) {
        newTransactionIds = outcome.newTransactionIds
        updatedTransactionIds = outcome.updatedTransactionIds
        unchangedTransactionIds = outcome.unchangedTransactionIds
        isDuplicate = outcome.isDuplicate
    }
}

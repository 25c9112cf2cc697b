import Foundation
import StoreGateCore
import StoreGateLedger

/// The wire form of an account's entitlements (`Entitlements` in the OpenAPI document).
///
/// A stable mapping of the ledger's model: the service's JSON does not change when the
/// ledger's Swift types do.
struct EntitlementsReply: JSONWritable {
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
    /// The catalog's entitlements, derived from the products above and the account's grants.
    let entitlements: [EntitlementReply]

    init(_ entitlements: Entitlements, catalog: [Entitlement]) {
        self.entitlements = catalog.map(EntitlementReply.init)
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
struct ProductReply: JSONWritable {
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
struct BalanceReply: JSONWritable {
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

/// One auto-renewable subscription group (`SubscriptionEntitlement`).
struct SubscriptionReply: JSONWritable {
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

    init(_ status: SubscriptionEntitlement) {
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
struct TransactionReply: JSONWritable {
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

/// A notification the ledger took (`RecordedNotification` of the ledger).
struct NotificationSummaryReply: JSONWritable {
    let notificationUUID: String
    let notificationType: String
    let subtype: String?
    let signedDate: Date
    let environment: String
    let transactionId: String?

    init(_ summary: RecordedNotification) {
        notificationUUID = summary.notificationUUID
        notificationType = summary.notificationType
        subtype = summary.subtype
        signedDate = summary.signedDate
        environment = summary.environment.rawValue
        transactionId = summary.transactionId
    }
}

/// What recording a proof changed (`RecordOutcome`).
struct RecordedReply: JSONWritable {
    let newTransactionIds: [String]
    let updatedTransactionIds: [String]
    let unchangedTransactionIds: [String]
    let transferredOriginalTransactionIds: [String]
    let isDuplicate: Bool

    init(_ outcome: RecordOutcome) {
        newTransactionIds = outcome.newTransactionIds
        updatedTransactionIds = outcome.updatedTransactionIds
        unchangedTransactionIds = outcome.unchangedTransactionIds
        transferredOriginalTransactionIds = outcome.transferredOriginalTransactionIds
        isDuplicate = outcome.isDuplicate
    }
}

// MARK: JSON

extension EntitlementsReply {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("account", account)
            json.member("asOf", asOf)
            json.member("entitlements", entitlements)
            json.member("entitledProductIds", entitledProductIds)
            json.member("nonConsumables", nonConsumables)
            json.member("nonRenewingSubscriptions", nonRenewingSubscriptions)
            json.member("consumables", consumables)
            json.member("subscriptions", subscriptions)
            json.member("otherProducts", otherProducts)
        }
    }
}

extension ProductReply {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("productId", productId)
            json.member("productType", productType)
            json.member("isEntitled", isEntitled)
            json.member("balance", balance)
            json.member("transactions", transactions)
            json.member("notifications", notifications)
        }
    }
}

extension BalanceReply {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("purchased", purchased)
            json.member("refunded", refunded)
            json.member("consumed", consumed)
            json.member("available", available)
            json.member("refundDebt", refundDebt)
        }
    }
}

extension SubscriptionReply {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("subscriptionGroup", subscriptionGroup)
            json.member("state", state)
            json.member("isEntitled", isEntitled)
            json.member("productId", productId)
            json.member("environment", environment)
            json.member("originalTransactionId", originalTransactionId)
            json.member("decidingTransactionId", decidingTransactionId)
            json.member("expiresDate", expiresDate)
            json.member("willAutoRenew", willAutoRenew)
            json.member("autoRenewProductId", autoRenewProductId)
            json.member("isInBillingRetryPeriod", isInBillingRetryPeriod)
            json.member("gracePeriodExpiresDate", gracePeriodExpiresDate)
            json.member("expirationIntent", expirationIntent)
            json.member("transactions", transactions)
            json.member("notifications", notifications)
        }
    }
}

extension TransactionReply {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("environment", environment)
            json.member("transactionId", transactionId)
            json.member("originalTransactionId", originalTransactionId)
            json.member("productId", productId)
            json.member("productType", productType)
            json.member("subscriptionGroup", subscriptionGroup)
            json.member("quantity", quantity)
            json.member("purchaseDate", purchaseDate)
            json.member("originalPurchaseDate", originalPurchaseDate)
            json.member("expiresDate", expiresDate)
            json.member("revocationDate", revocationDate)
            json.member("revocationReason", revocationReason)
            json.member("isRevoked", isRevoked)
            json.member("isUpgraded", isUpgraded)
            json.member("webOrderLineItemId", webOrderLineItemId)
            json.member("source", source)
            json.member("observedAt", observedAt)
        }
    }
}

extension NotificationSummaryReply {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("notificationUUID", notificationUUID)
            json.member("notificationType", notificationType)
            json.member("subtype", subtype)
            json.member("signedDate", signedDate)
            json.member("environment", environment)
            json.member("transactionId", transactionId)
        }
    }
}

extension RecordedReply {
    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("newTransactionIds", newTransactionIds)
            json.member("updatedTransactionIds", updatedTransactionIds)
            json.member("unchangedTransactionIds", unchangedTransactionIds)
            json.member("transferredOriginalTransactionIds", transferredOriginalTransactionIds)
            json.member("isDuplicate", isDuplicate)
        }
    }
}

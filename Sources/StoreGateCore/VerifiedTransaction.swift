public import Foundation

/// One in-app purchase whose proof StoreGate verified: the common shape of an app receipt's
/// in-app entry and a StoreKit 2 signed transaction.
///
/// Only StoreGate's verifiers create values of this type (its initializer is `package`), so a
/// ledger that accepts `VerifiedTransaction` accepts nothing unverified.
public struct VerifiedTransaction: Sendable, Hashable, Encodable {
    /// The environment the proof was verified in (see ``ValidatedSigner/reportedEnvironment(claimed:)``).
    public let environment: AppStoreEnvironment
    public let bundleId: String
    public let transactionId: String
    public let originalTransactionId: String
    public let productId: String
    /// Apple's product type; `nil` for app receipts, which do not carry it.
    public let productType: ProductType?
    public let quantity: Int
    public let purchaseDate: Date
    public let originalPurchaseDate: Date?
    /// Subscriptions: when this period ends.
    public let expiresDate: Date?
    /// Refund or revocation time (receipt `cancellation_date`, JWS `revocationDate`).
    public let revocationDate: Date?
    /// Apple's revocation reason (0 other, 1 app issue).
    public let revocationReason: Int?
    public let webOrderLineItemId: String?
    public let subscriptionGroupIdentifier: String?
    /// The account token the app set on the purchase, when it set one.
    public let appAccountToken: UUID?
    /// The customer upgraded to another subscription in the same group.
    public let isUpgraded: Bool
    /// When Apple signed the proof this transaction came from.
    public let signedDate: Date
    /// The proof it came from.
    public let source: ProofKind
    /// Price, currency, storefront and offer, from a signed transaction; `nil` for an app
    /// receipt's transaction, which carries none (the price is unknown, never guessed).
    public let money: MoneyFacts?

    package init(
        environment: AppStoreEnvironment,
        bundleId: String,
        transactionId: String,
        originalTransactionId: String,
        productId: String,
        productType: ProductType?,
        quantity: Int,
        purchaseDate: Date,
        originalPurchaseDate: Date?,
        expiresDate: Date?,
        revocationDate: Date?,
        revocationReason: Int?,
        webOrderLineItemId: String?,
        subscriptionGroupIdentifier: String?,
        appAccountToken: UUID?,
        isUpgraded: Bool,
        signedDate: Date,
        source: ProofKind,
        money: MoneyFacts? = nil
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.productType = productType
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.webOrderLineItemId = webOrderLineItemId
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.appAccountToken = appAccountToken
        self.isUpgraded = isUpgraded
        self.signedDate = signedDate
        self.source = source
        self.money = money
    }
}

/// The renewal state of one auto-renewable subscription, from a verified signed renewal info.
public struct VerifiedRenewalInfo: Sendable, Hashable, Encodable {
    public let environment: AppStoreEnvironment
    public let originalTransactionId: String
    public let productId: String
    public let autoRenewProductId: String?
    /// Whether the subscription will renew (`autoRenewStatus` 1).
    public let willAutoRenew: Bool
    public let expirationIntent: Int?
    public let isInBillingRetryPeriod: Bool
    public let gracePeriodExpiresDate: Date?
    public let renewalDate: Date?
    public let signedDate: Date

    package init(
        environment: AppStoreEnvironment,
        originalTransactionId: String,
        productId: String,
        autoRenewProductId: String?,
        willAutoRenew: Bool,
        expirationIntent: Int?,
        isInBillingRetryPeriod: Bool,
        gracePeriodExpiresDate: Date?,
        renewalDate: Date?,
        signedDate: Date
    ) {
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.willAutoRenew = willAutoRenew
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.renewalDate = renewalDate
        self.signedDate = signedDate
    }
}

/// A verified proof holding purchases: what the ledger records.
public struct VerifiedProof: Sendable, Hashable {
    public let kind: ProofKind
    public let environment: AppStoreEnvironment
    public let bundleId: String
    /// When the proof was signed (receipt creation date, JWS `signedDate`).
    public let signedDate: Date
    public let transactions: [VerifiedTransaction]
    /// Renewal state carried alongside (a signed renewal info), if any.
    public let renewalInfo: VerifiedRenewalInfo?
    /// The proof exactly as received, for encrypted storage; never logged.
    public let rawProof: [UInt8]

    package init(
        kind: ProofKind,
        environment: AppStoreEnvironment,
        bundleId: String,
        signedDate: Date,
        transactions: [VerifiedTransaction],
        renewalInfo: VerifiedRenewalInfo? = nil,
        rawProof: [UInt8]
    ) {
        self.kind = kind
        self.environment = environment
        self.bundleId = bundleId
        self.signedDate = signedDate
        self.transactions = transactions
        self.renewalInfo = renewalInfo
        self.rawProof = rawProof
    }
}

/// A verified App Store Server Notification V2, with its nested signed data verified too.
public struct VerifiedNotification: Sendable, Hashable {
    public let notificationUUID: String
    /// Apple's `notificationType` (`REFUND`, `DID_RENEW`, …).
    public let notificationType: String
    public let subtype: String?
    public let signedDate: Date
    public let environment: AppStoreEnvironment
    public let bundleId: String
    public let transaction: VerifiedTransaction?
    public let renewalInfo: VerifiedRenewalInfo?
    /// The `signedPayload` exactly as received, for encrypted storage; never logged.
    public let rawProof: [UInt8]

    package init(
        notificationUUID: String,
        notificationType: String,
        subtype: String?,
        signedDate: Date,
        environment: AppStoreEnvironment,
        bundleId: String,
        transaction: VerifiedTransaction?,
        renewalInfo: VerifiedRenewalInfo?,
        rawProof: [UInt8]
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.signedDate = signedDate
        self.environment = environment
        self.bundleId = bundleId
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.rawProof = rawProof
    }
}

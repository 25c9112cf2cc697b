public import Foundation
public import StoreGateCore

/// What the ledger holds about one transaction: its current state after every observation
/// (proofs and notifications) it has taken.
///
/// Mutable facts (expiry, revocation, upgrade) come from the most recent observation by
/// signing date, so any order of delivery ends in the same state.
public struct RecordedTransaction: Sendable, Hashable, Codable {
    /// The environment the transaction was verified in.
    public var environment: AppStoreEnvironment
    /// Apple's transaction id.
    public var transactionId: String
    /// The transaction id of the first purchase of its family (renewals and restores share it).
    public var originalTransactionId: String
    /// The owning account; `nil` while only a notification has mentioned the purchase.
    public var account: AccountID?
    /// The app's bundle id.
    public var bundleId: String
    /// The product purchased.
    public var productId: String
    /// Apple's type when a signed transaction stated it, else the catalog's decision.
    public var productType: ProductType
    /// Apple's subscription group when stated, else the catalog's, else the product id.
    public var subscriptionGroup: String
    /// Units bought (consumables may be bought several at once).
    public var quantity: Int
    /// When this transaction was purchased (for a renewal, when the period began).
    public var purchaseDate: Date
    /// When the family's first purchase was made.
    public var originalPurchaseDate: Date?
    /// Subscriptions: when this period ends.
    public var expiresDate: Date?
    /// When Apple refunded or revoked it; `nil` while it stands.
    public var revocationDate: Date?
    /// Apple's revocation reason (0 other, 1 an issue with the app).
    public var revocationReason: Int?
    /// Whether the customer upgraded to another subscription of the group.
    public var isUpgraded: Bool
    /// Apple's web order line item id, when given.
    public var webOrderLineItemId: String?
    /// The account token the app set on the purchase, when it set one.
    public var appAccountToken: UUID?
    /// The signing date of the observation that decided the mutable facts.
    public var observedAt: Date
    /// The kind of proof of that observation.
    public var source: ProofKind
    /// The stored proof of that observation, when one was stored.
    public var proofDigest: ProofDigest?
    /// Price, currency, storefront and offer, from the first signed transaction that stated
    /// them; `nil` while only an app receipt has shown the transaction (its price is unknown,
    /// never guessed, until Apple's history is read: `MoneyFacts`).
    public var money: MoneyFacts?

    /// The kind of period this transaction paid for, from its offer; `nil` while its money
    /// facts are unknown.
    public var periodType: PeriodType? { money.map(PeriodType.init(money:)) }

    /// Whether Apple refunded or revoked it.
    public var isRevoked: Bool { revocationDate != nil }

    package init(
        environment: AppStoreEnvironment,
        transactionId: String,
        originalTransactionId: String,
        account: AccountID?,
        bundleId: String,
        productId: String,
        productType: ProductType,
        subscriptionGroup: String,
        quantity: Int,
        purchaseDate: Date,
        originalPurchaseDate: Date?,
        expiresDate: Date?,
        revocationDate: Date?,
        revocationReason: Int?,
        isUpgraded: Bool,
        webOrderLineItemId: String?,
        appAccountToken: UUID?,
        observedAt: Date,
        source: ProofKind,
        proofDigest: ProofDigest?,
        money: MoneyFacts? = nil
    ) {
        self.environment = environment
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.account = account
        self.bundleId = bundleId
        self.productId = productId
        self.productType = productType
        self.subscriptionGroup = subscriptionGroup
        self.quantity = quantity
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.revocationDate = revocationDate
        self.revocationReason = revocationReason
        self.isUpgraded = isUpgraded
        self.webOrderLineItemId = webOrderLineItemId
        self.appAccountToken = appAccountToken
        self.observedAt = observedAt
        self.source = source
        self.proofDigest = proofDigest
        self.money = money
    }
}

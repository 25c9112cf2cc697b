import Foundation
import StoreGateCore

/// What the ledger holds about one transaction: its current state after every observation
/// (proofs and notifications) it has taken.
///
/// Mutable facts (expiry, revocation, upgrade) come from the most recent observation by
/// signing date, so any order of delivery ends in the same state.
public struct RecordedTransaction: Sendable, Hashable, Codable {
    public var environment: Environment
    public var transactionId: String
    public var originalTransactionId: String
    /// The owning account; `nil` while only a notification has mentioned the purchase.
    public var account: AccountID?
    public var bundleId: String
    public var productId: String
    /// Apple's type when a signed transaction stated it, else the catalog's decision.
    public var productType: ProductType
    /// Apple's subscription group when stated, else the catalog's, else the product id.
    public var subscriptionGroup: String
    public var quantity: Int
    public var purchaseDate: Date
    public var originalPurchaseDate: Date?
    public var expiresDate: Date?
    /// When Apple refunded or revoked it; `nil` while it stands.
    public var revocationDate: Date?
    public var revocationReason: Int?
    public var isUpgraded: Bool
    public var webOrderLineItemId: String?
    public var appAccountToken: UUID?
    /// The signing date of the observation that decided the mutable facts.
    public var observedAt: Date
    /// The kind of proof of that observation.
    public var source: ProofKind
    /// The stored proof of that observation, when one was stored.
    public var proofDigest: ProofDigest?

    /// Whether Apple refunded or revoked it.
    public var isRevoked: Bool { revocationDate != nil }

    package init(
        environment: Environment,
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
        proofDigest: ProofDigest?
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
    }
}

/// A notification the ledger took, as evidence of what it decided.
public struct NotificationSummary: Sendable, Hashable, Codable {
    public var notificationUUID: String
    /// Apple's `notificationType`.
    public var notificationType: String
    public var subtype: String?
    public var signedDate: Date
    public var environment: Environment
    /// The transaction it carried, if any.
    public var transactionId: String?
    public var originalTransactionId: String?

    package init(
        notificationUUID: String,
        notificationType: String,
        subtype: String?,
        signedDate: Date,
        environment: Environment,
        transactionId: String?,
        originalTransactionId: String?
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.signedDate = signedDate
        self.environment = environment
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
    }
}

public import Foundation

/// One in-app purchase entry of an app receipt (attribute 17), with every field Apple documents.
public struct InAppPurchase: Hashable, Sendable {
    /// 1701: how many units were bought.
    public var quantity: Int
    /// 1702: the product identifier.
    public var productId: String
    /// 1703: the transaction identifier.
    public var transactionId: String
    /// 1704: when the purchase (or renewal) happened.
    public var purchaseDate: Date
    /// 1705: the transaction that started this purchase (the first one of a subscription).
    public var originalTransactionId: String?
    /// 1706: when the original transaction happened.
    public var originalPurchaseDate: Date?
    /// 1708: when this subscription period ends.
    public var subscriptionExpirationDate: Date?
    /// 1711: the web order line item id (subscriptions).
    public var webOrderLineItemId: Int64?
    /// 1712: when Apple refunded or revoked the purchase.
    public var cancellationDate: Date?
    /// 1713: a free trial period.
    public var isTrialPeriod: Bool?
    /// 1719: an introductory price period.
    public var isInIntroOfferPeriod: Bool?
    /// 1721: the promotional offer's identifier.
    public var promotionalOfferId: String?
    /// Attributes with numbers StoreGate does not interpret, kept by number.
    public var unknownAttributes: [ReceiptAttribute]

    public init(
        quantity: Int,
        productId: String,
        transactionId: String,
        purchaseDate: Date,
        originalTransactionId: String? = nil,
        originalPurchaseDate: Date? = nil,
        subscriptionExpirationDate: Date? = nil,
        webOrderLineItemId: Int64? = nil,
        cancellationDate: Date? = nil,
        isTrialPeriod: Bool? = nil,
        isInIntroOfferPeriod: Bool? = nil,
        promotionalOfferId: String? = nil,
        unknownAttributes: [ReceiptAttribute] = []
    ) {
        self.quantity = quantity
        self.productId = productId
        self.transactionId = transactionId
        self.purchaseDate = purchaseDate
        self.originalTransactionId = originalTransactionId
        self.originalPurchaseDate = originalPurchaseDate
        self.subscriptionExpirationDate = subscriptionExpirationDate
        self.webOrderLineItemId = webOrderLineItemId
        self.cancellationDate = cancellationDate
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.promotionalOfferId = promotionalOfferId
        self.unknownAttributes = unknownAttributes
    }
}

public import Foundation

/// One purchase in a verifyReceipt reply: an entry of `receipt.in_app` or
/// `latest_receipt_info` (and, for iOS 6-style receipts, the receipt itself).
///
/// Read as Apple sends it, unverified: ids and `_ms` dates may be strings or numbers, booleans
/// `"true"` or `true`; unknown keys are ignored. Dates come from the `_ms` fields.
public struct VerifyReceiptTransaction: Sendable, Hashable, Codable {
    /// Apple's `quantity`.
    public var quantity: Int?
    /// Apple's `product_id`.
    public var productId: String?
    /// Apple's `transaction_id`.
    public var transactionId: String?
    /// Apple's `original_transaction_id`.
    public var originalTransactionId: String?
    /// Apple's `purchase_date_ms` (milliseconds since 1970), as a date.
    public var purchaseDate: Date?
    /// Apple's `original_purchase_date_ms` (milliseconds since 1970), as a date.
    public var originalPurchaseDate: Date?
    /// Apple's `expires_date_ms` (milliseconds since 1970), as a date.
    public var expiresDate: Date?
    /// When Apple refunded or revoked the purchase.
    public var cancellationDate: Date?
    /// 0 other, 1 a problem in the app.
    public var cancellationReason: Int?
    /// Apple's `web_order_line_item_id`.
    public var webOrderLineItemId: String?
    /// Apple's `is_trial_period`.
    public var isTrialPeriod: Bool?
    /// Apple's `is_in_intro_offer_period`.
    public var isInIntroOfferPeriod: Bool?
    /// Apple's `is_upgraded`.
    public var isUpgraded: Bool?
    /// Apple's `promotional_offer_id`.
    public var promotionalOfferId: String?
    /// Apple's `offer_code_ref_name`.
    public var offerCodeRefName: String?
    /// Apple's `subscription_group_identifier`.
    public var subscriptionGroupIdentifier: String?
    /// `PURCHASED` or `FAMILY_SHARED`.
    public var inAppOwnershipType: String?
    /// Apple's `app_account_token`.
    public var appAccountToken: String?

    /// Creates a value from its parts.
    public init(
        quantity: Int? = nil,
        productId: String? = nil,
        transactionId: String? = nil,
        originalTransactionId: String? = nil,
        purchaseDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        expiresDate: Date? = nil,
        cancellationDate: Date? = nil,
        cancellationReason: Int? = nil,
        webOrderLineItemId: String? = nil,
        isTrialPeriod: Bool? = nil,
        isInIntroOfferPeriod: Bool? = nil,
        isUpgraded: Bool? = nil,
        promotionalOfferId: String? = nil,
        offerCodeRefName: String? = nil,
        subscriptionGroupIdentifier: String? = nil,
        inAppOwnershipType: String? = nil,
        appAccountToken: String? = nil
    ) {
        self.quantity = quantity
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.purchaseDate = purchaseDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expiresDate = expiresDate
        self.cancellationDate = cancellationDate
        self.cancellationReason = cancellationReason
        self.webOrderLineItemId = webOrderLineItemId
        self.isTrialPeriod = isTrialPeriod
        self.isInIntroOfferPeriod = isInIntroOfferPeriod
        self.isUpgraded = isUpgraded
        self.promotionalOfferId = promotionalOfferId
        self.offerCodeRefName = offerCodeRefName
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.inAppOwnershipType = inAppOwnershipType
        self.appAccountToken = appAccountToken
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        quantity = try c.lenientInt("quantity")
        productId = try c.lenientString("product_id")
        transactionId = try c.lenientString("transaction_id")
        originalTransactionId = try c.lenientString("original_transaction_id")
        purchaseDate = try c.lenientDate("purchase_date")
        originalPurchaseDate = try c.lenientDate("original_purchase_date")
        expiresDate = try c.lenientDate("expires_date")
        cancellationDate = try c.lenientDate("cancellation_date")
        cancellationReason = try c.lenientInt("cancellation_reason")
        webOrderLineItemId = try c.lenientString("web_order_line_item_id")
        isTrialPeriod = try c.lenientBool("is_trial_period")
        isInIntroOfferPeriod = try c.lenientBool("is_in_intro_offer_period")
        isUpgraded = try c.lenientBool("is_upgraded")
        promotionalOfferId = try c.lenientString("promotional_offer_id")
        offerCodeRefName = try c.lenientString("offer_code_ref_name")
        subscriptionGroupIdentifier = try c.lenientString("subscription_group_identifier")
        inAppOwnershipType = try c.lenientString("in_app_ownership_type")
        appAccountToken = try c.lenientString("app_account_token")
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: AnyKey.self)
        try c.appleInt("quantity", quantity)
        try c.appleString("product_id", productId)
        try c.appleString("transaction_id", transactionId)
        try c.appleString("original_transaction_id", originalTransactionId)
        try c.appleDate("purchase_date", purchaseDate)
        try c.appleDate("original_purchase_date", originalPurchaseDate)
        try c.appleDate("expires_date", expiresDate)
        try c.appleDate("cancellation_date", cancellationDate)
        try c.appleInt("cancellation_reason", cancellationReason)
        try c.appleString("web_order_line_item_id", webOrderLineItemId)
        try c.appleBool("is_trial_period", isTrialPeriod)
        try c.appleBool("is_in_intro_offer_period", isInIntroOfferPeriod)
        try c.appleBool("is_upgraded", isUpgraded)
        try c.appleString("promotional_offer_id", promotionalOfferId)
        try c.appleString("offer_code_ref_name", offerCodeRefName)
        try c.appleString("subscription_group_identifier", subscriptionGroupIdentifier)
        try c.appleString("in_app_ownership_type", inAppOwnershipType)
        try c.appleString("app_account_token", appAccountToken)
    }
}

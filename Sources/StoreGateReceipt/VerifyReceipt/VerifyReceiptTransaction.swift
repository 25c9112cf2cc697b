public import Foundation
package import StoreGateCore

/// One purchase in a verifyReceipt reply: an entry of `receipt.in_app` or
/// `latest_receipt_info` (and, for iOS 6-style receipts, the receipt itself).
///
/// Read as Apple sends it, unverified: ids and `_ms` dates may be strings or numbers, booleans
/// `"true"` or `true`; unknown keys are ignored. Dates come from the `_ms` fields.
///
/// Written back in Apple's spelling, whether it came from a reply or from a receipt decoded
/// offline (``init(_:)``): ids and the quantity as strings, booleans as `"true"`/`"false"`,
/// each date as `x`, `x_ms` and `x_pst` from one whole millisecond. Encoding gives the same.
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

    /// Decodes a purchase as Apple spells it in any reply (see the type's discussion).
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

    /// Encodes the purchase in Apple's spelling, as `write(to:)` writes it.
    public func encode(to encoder: any Encoder) throws {
        try encodeAsWritten(to: encoder)
    }
}

extension VerifyReceiptTransaction: JSONWritable {
    /// The purchase in Apple's spelling, members in Apple's order: ids and the quantity as
    /// strings, booleans as `"true"`/`"false"`, each date as `x`, `x_ms` and `x_pst`.
    package func write(to json: inout JSONWriter) {
        json.object { json in
            json.appleInteger("quantity", quantity)
            json.member("product_id", productId)
            json.member("transaction_id", transactionId)
            json.member("original_transaction_id", originalTransactionId)
            json.appleDate("purchase_date", purchaseDate)
            json.appleDate("original_purchase_date", originalPurchaseDate)
            json.appleDate("expires_date", expiresDate)
            json.member("web_order_line_item_id", webOrderLineItemId)
            json.appleBool("is_trial_period", isTrialPeriod)
            json.appleBool("is_in_intro_offer_period", isInIntroOfferPeriod)
            json.appleDate("cancellation_date", cancellationDate)
            json.appleInteger("cancellation_reason", cancellationReason)
            json.appleBool("is_upgraded", isUpgraded)
            json.member("promotional_offer_id", promotionalOfferId)
            json.member("offer_code_ref_name", offerCodeRefName)
            json.member("in_app_ownership_type", inAppOwnershipType)
            json.member("subscription_group_identifier", subscriptionGroupIdentifier)
            json.member("app_account_token", appAccountToken)
        }
    }
}

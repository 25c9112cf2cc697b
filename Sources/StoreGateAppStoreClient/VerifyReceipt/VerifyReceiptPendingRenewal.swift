public import Foundation
package import StoreGateCore
import StoreGateReceipt

/// One entry of a verifyReceipt reply's `pending_renewal_info`: what an auto-renewable
/// subscription will do at its next renewal. Unverified; unknown keys are ignored.
public struct VerifyReceiptPendingRenewal: Sendable, Hashable, Codable {
    /// Apple's `auto_renew_product_id`.
    public var autoRenewProductId: String?
    /// Whether the subscription will renew (`auto_renew_status` 1).
    public var autoRenewStatus: Bool?
    /// Why the subscription expired (1 cancelled, 2 billing error, 3 price increase refused,
    /// 4 product unavailable, 5 other).
    public var expirationIntent: Int?
    /// Apple's `grace_period_expires_date_ms` (milliseconds since 1970), as a date.
    public var gracePeriodExpiresDate: Date?
    /// Apple's `is_in_billing_retry_period`.
    public var isInBillingRetryPeriod: Bool?
    /// Apple's `offer_code_ref_name`.
    public var offerCodeRefName: String?
    /// Apple's `original_transaction_id`.
    public var originalTransactionId: String?
    /// Apple's `price_consent_status`.
    public var priceConsentStatus: Int?
    /// Apple's `product_id`.
    public var productId: String?
    /// Apple's `promotional_offer_id`.
    public var promotionalOfferId: String?
    /// Apple's `price_increase_status`.
    public var priceIncreaseStatus: Int?

    /// Creates a value from its parts.
    public init(
        autoRenewProductId: String? = nil,
        autoRenewStatus: Bool? = nil,
        expirationIntent: Int? = nil,
        gracePeriodExpiresDate: Date? = nil,
        isInBillingRetryPeriod: Bool? = nil,
        offerCodeRefName: String? = nil,
        originalTransactionId: String? = nil,
        priceConsentStatus: Int? = nil,
        productId: String? = nil,
        promotionalOfferId: String? = nil,
        priceIncreaseStatus: Int? = nil
    ) {
        self.autoRenewProductId = autoRenewProductId
        self.autoRenewStatus = autoRenewStatus
        self.expirationIntent = expirationIntent
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.offerCodeRefName = offerCodeRefName
        self.originalTransactionId = originalTransactionId
        self.priceConsentStatus = priceConsentStatus
        self.productId = productId
        self.promotionalOfferId = promotionalOfferId
        self.priceIncreaseStatus = priceIncreaseStatus
    }

    /// Decodes an entry as Apple spells it, leniently.
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        autoRenewProductId = try c.lenientString("auto_renew_product_id")
        autoRenewStatus = try c.lenientBool("auto_renew_status")
        expirationIntent = try c.lenientInt("expiration_intent")
        gracePeriodExpiresDate = try c.lenientDate("grace_period_expires_date")
        isInBillingRetryPeriod = try c.lenientBool("is_in_billing_retry_period")
        offerCodeRefName = try c.lenientString("offer_code_ref_name")
        originalTransactionId = try c.lenientString("original_transaction_id")
        priceConsentStatus = try c.lenientInt("price_consent_status")
        productId = try c.lenientString("product_id")
        promotionalOfferId = try c.lenientString("promotional_offer_id")
        priceIncreaseStatus = try c.lenientInt("price_increase_status")
    }

    /// Encodes the entry in Apple's spelling, as ``write(to:)`` writes it.
    public func encode(to encoder: any Encoder) throws {
        try encodeAsWritten(to: encoder)
    }
}

extension VerifyReceiptPendingRenewal: JSONWritable {
    /// The entry in Apple's spelling: flags as `"1"`/`"0"`, numbers as strings, the grace
    /// period's end as `x`, `x_ms` and `x_pst`.
    package func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("auto_renew_product_id", autoRenewProductId)
            json.member("auto_renew_status", autoRenewStatus.map { $0 ? "1" : "0" })
            json.appleInteger("expiration_intent", expirationIntent)
            json.appleDate("grace_period_expires_date", gracePeriodExpiresDate)
            json.member("is_in_billing_retry_period", isInBillingRetryPeriod.map { $0 ? "1" : "0" })
            json.member("offer_code_ref_name", offerCodeRefName)
            json.member("original_transaction_id", originalTransactionId)
            json.appleInteger("price_consent_status", priceConsentStatus)
            json.member("product_id", productId)
            json.member("promotional_offer_id", promotionalOfferId)
            json.appleInteger("price_increase_status", priceIncreaseStatus)
        }
    }
}

public import Foundation
import StoreGateCore

/// An app receipt in the JSON shape of Apple's verifyReceipt reply (`receipt` object).
///
/// Field names and value formats are Apple's: ids and counts as strings, dates three times
/// (`…`, `…_ms`, `…_pst`), booleans as `"true"`/`"false"`.
public struct AppleReceiptJSON: Codable, Hashable, Sendable {
    public var receipt_type: String?
    public var adam_id: Int64?
    public var app_item_id: Int64?
    public var bundle_id: String
    public var application_version: String
    public var download_id: Int64?
    public var version_external_identifier: Int64?
    public var receipt_creation_date: String
    public var receipt_creation_date_ms: String
    public var receipt_creation_date_pst: String
    public var request_date: String?
    public var request_date_ms: String?
    public var request_date_pst: String?
    public var original_purchase_date: String?
    public var original_purchase_date_ms: String?
    public var original_purchase_date_pst: String?
    public var original_application_version: String?
    public var expiration_date: String?
    public var expiration_date_ms: String?
    public var expiration_date_pst: String?
    public var in_app: [AppleInAppJSON]
}

/// One entry of `receipt.in_app` in Apple's verifyReceipt JSON shape.
public struct AppleInAppJSON: Codable, Hashable, Sendable {
    public var quantity: String
    public var product_id: String
    public var transaction_id: String
    public var original_transaction_id: String
    public var purchase_date: String
    public var purchase_date_ms: String
    public var purchase_date_pst: String
    public var original_purchase_date: String?
    public var original_purchase_date_ms: String?
    public var original_purchase_date_pst: String?
    public var expires_date: String?
    public var expires_date_ms: String?
    public var expires_date_pst: String?
    public var web_order_line_item_id: String?
    public var is_trial_period: String
    public var is_in_intro_offer_period: String?
    public var cancellation_date: String?
    public var cancellation_date_ms: String?
    public var cancellation_date_pst: String?
    public var promotional_offer_id: String?
}

extension AppReceipt {
    /// This receipt as verifyReceipt's `receipt` object; `requestDate` fills `request_date*`.
    public func appleJSON(requestDate: Date? = nil) -> AppleReceiptJSON {
        AppleReceiptJSON(
            receipt_type: receiptType,
            adam_id: appItemId,
            app_item_id: appItemId,
            bundle_id: bundleId,
            application_version: appVersion,
            download_id: downloadId,
            version_external_identifier: versionExternalIdentifier,
            receipt_creation_date: CivilTime.AppleDate(creationDate).gmt,
            receipt_creation_date_ms: CivilTime.AppleDate(creationDate).millisecondsText,
            receipt_creation_date_pst: CivilTime.AppleDate(creationDate).pst,
            request_date: requestDate.map { CivilTime.AppleDate($0).gmt },
            request_date_ms: requestDate.map { CivilTime.AppleDate($0).millisecondsText },
            request_date_pst: requestDate.map { CivilTime.AppleDate($0).pst },
            original_purchase_date: originalPurchaseDate.map { CivilTime.AppleDate($0).gmt },
            original_purchase_date_ms: originalPurchaseDate.map { CivilTime.AppleDate($0).millisecondsText },
            original_purchase_date_pst: originalPurchaseDate.map { CivilTime.AppleDate($0).pst },
            original_application_version: originalAppVersion,
            expiration_date: expirationDate.map { CivilTime.AppleDate($0).gmt },
            expiration_date_ms: expirationDate.map { CivilTime.AppleDate($0).millisecondsText },
            expiration_date_pst: expirationDate.map { CivilTime.AppleDate($0).pst },
            in_app: inAppPurchases.map { $0.appleJSON }
        )
    }
}

extension InAppPurchase {
    /// This purchase as an entry of verifyReceipt's `in_app`.
    public var appleJSON: AppleInAppJSON {
        AppleInAppJSON(
            quantity: String(quantity),
            product_id: productId,
            transaction_id: transactionId,
            original_transaction_id: originalTransactionId ?? transactionId,
            purchase_date: CivilTime.AppleDate(purchaseDate).gmt,
            purchase_date_ms: CivilTime.AppleDate(purchaseDate).millisecondsText,
            purchase_date_pst: CivilTime.AppleDate(purchaseDate).pst,
            original_purchase_date: originalPurchaseDate.map { CivilTime.AppleDate($0).gmt },
            original_purchase_date_ms: originalPurchaseDate.map { CivilTime.AppleDate($0).millisecondsText },
            original_purchase_date_pst: originalPurchaseDate.map { CivilTime.AppleDate($0).pst },
            expires_date: subscriptionExpirationDate.map { CivilTime.AppleDate($0).gmt },
            expires_date_ms: subscriptionExpirationDate.map { CivilTime.AppleDate($0).millisecondsText },
            expires_date_pst: subscriptionExpirationDate.map { CivilTime.AppleDate($0).pst },
            web_order_line_item_id: webOrderLineItemId.map { String($0) },
            is_trial_period: (isTrialPeriod ?? false) ? "true" : "false",
            is_in_intro_offer_period: isInIntroOfferPeriod.map { $0 ? "true" : "false" },
            cancellation_date: cancellationDate.map { CivilTime.AppleDate($0).gmt },
            cancellation_date_ms: cancellationDate.map { CivilTime.AppleDate($0).millisecondsText },
            cancellation_date_pst: cancellationDate.map { CivilTime.AppleDate($0).pst },
            promotional_offer_id: promotionalOfferId
        )
    }
}

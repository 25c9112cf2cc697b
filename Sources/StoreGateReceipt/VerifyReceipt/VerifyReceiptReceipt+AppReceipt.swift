public import Foundation

extension VerifyReceiptReceipt {
    /// A receipt decoded offline, as verifyReceipt's `receipt` object describes it: what
    /// `storegate inspect` prints and the service's replies embed.
    ///
    /// `adam_id` and `app_item_id` both carry the app item id; the receipt's own fields fill the
    /// rest, and its purchases become ``inApp`` (see ``VerifyReceiptTransaction/init(_:)``).
    ///
    /// - Parameters:
    ///   - receipt: The decoded receipt.
    ///   - requestDate: When the receipt was asked about; fills `request_date`.
    public init(_ receipt: AppReceipt, requestDate: Date? = nil) {
        self.init(
            receiptType: receipt.receiptType,
            bundleId: receipt.bundleId,
            applicationVersion: receipt.appVersion,
            originalApplicationVersion: receipt.originalAppVersion,
            adamId: receipt.appItemId.map { String($0) },
            appItemId: receipt.appItemId.map { String($0) },
            downloadId: receipt.downloadId.map { String($0) },
            versionExternalIdentifier: receipt.versionExternalIdentifier.map { String($0) },
            receiptCreationDate: receipt.creationDate,
            requestDate: requestDate,
            originalPurchaseDate: receipt.originalPurchaseDate,
            expirationDate: receipt.expirationDate,
            inApp: receipt.inAppPurchases.map(VerifyReceiptTransaction.init)
        )
    }
}

extension VerifyReceiptTransaction {
    /// An in-app purchase decoded offline, as an entry of verifyReceipt's `in_app`.
    ///
    /// As Apple writes such entries: `original_transaction_id` is the transaction's own id when
    /// the receipt names no other, and `is_trial_period` is `false` when the receipt is silent.
    ///
    /// - Parameter purchase: The decoded purchase.
    public init(_ purchase: InAppPurchase) {
        self.init(
            quantity: purchase.quantity,
            productId: purchase.productId,
            transactionId: purchase.transactionId,
            originalTransactionId: purchase.originalTransactionId ?? purchase.transactionId,
            purchaseDate: purchase.purchaseDate,
            originalPurchaseDate: purchase.originalPurchaseDate,
            expiresDate: purchase.subscriptionExpirationDate,
            cancellationDate: purchase.cancellationDate,
            webOrderLineItemId: purchase.webOrderLineItemId.map { String($0) },
            isTrialPeriod: purchase.isTrialPeriod ?? false,
            isInIntroOfferPeriod: purchase.isInIntroOfferPeriod,
            promotionalOfferId: purchase.promotionalOfferId
        )
    }
}

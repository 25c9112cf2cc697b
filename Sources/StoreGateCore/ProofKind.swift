/// The kind of proof a verdict or a ledger entry came from.
public enum ProofKind: String, Hashable, Sendable, Codable, CaseIterable {
    /// A PKCS#7 app receipt (`appStoreReceiptURL`).
    case appReceipt = "app_receipt"
    /// A StoreKit 2 signed transaction (JWS).
    case signedTransaction = "signed_transaction"
    /// A StoreKit 2 signed renewal info (JWS).
    case signedRenewalInfo = "signed_renewal_info"
    /// A StoreKit 2 signed app transaction (JWS).
    case appTransaction = "app_transaction"
    /// An App Store Server Notification V2 (`signedPayload`).
    case notification = "notification"
    /// A reply of Apple's legacy `verifyReceipt` endpoint.
    case verifyReceiptReply = "verify_receipt_reply"
}

public import StoreGateReceipt
public import StoreGateSignedData

/// Every step of one proof's verification against the service's own expectations, for people;
/// nothing is recorded. The console's inspector and transaction page show it.
public enum ProofInspection: Sendable {
    /// An app receipt (PKCS#7) and its verification.
    case receipt(ReceiptVerificationReport)
    /// A StoreKit 2 JWS and its verification.
    case signedData(SignedDataVerificationReport)
    /// Not a proof at all (not base64, or too large): the step, its code and the reason.
    case unreadable(step: String, code: String, reason: String)
}

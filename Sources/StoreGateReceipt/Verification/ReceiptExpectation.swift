public import StoreGateCore

/// One check of a receipt whose signature and chain hold: a small value with a stable name,
/// in the spirit of swift-certificates' `VerifierPolicy`.
///
/// ``ReceiptExpectations`` composes the built-in checks from its fields (environment, bundle
/// id, app version, device hash, receipt expiration, transaction, product) and runs any the
/// caller adds after them; the verifier evaluates them in that order, the first failure is the
/// verdict, and every result is reported (``VerifiedReceipt/checks``,
/// ``ReceiptVerificationReport/checks``).
///
/// A check the caller did not ask for answers `ExpectationResult.notChecked(_:)`,
/// never an error. A caller's own check that fails typically answers
/// ``ReceiptError/Code/expectationNotMet`` with its name as the field:
///
/// ```swift
/// struct NoRefunds: ReceiptExpectation {
///     let name = "no_refunds"
///     func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError> {
///         let refunded = claims.receipt.inAppPurchases.filter { $0.cancellationDate != nil }.count
///         guard refunded > 0 else { return .holds("no refunded purchases") }
///         return .fails(ReceiptError(.expectationNotMet, field: name, reason: "\(refunded) purchases were refunded"),
///                       detail: "\(refunded) refunded")
///     }
/// }
/// let expectations = ReceiptExpectations(bundleId: "com.example.app").adding(NoRefunds())
/// ```
public protocol ReceiptExpectation: Sendable {
    /// The name reports use: snake case, stable (`bundle_id`, `device_hash`, …).
    var name: String { get }

    /// Evaluates the check against a receipt whose signature and chain hold.
    ///
    /// - Parameter claims: The receipt, the environment StoreGate reports and the verifier's clock.
    /// - Returns: Whether the check holds, was not checked, or fails (with the error).
    func evaluate(_ claims: ReceiptClaims) -> ExpectationResult<ReceiptError>
}

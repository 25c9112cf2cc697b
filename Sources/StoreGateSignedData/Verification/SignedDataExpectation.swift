public import StoreGateCore

/// One check of signed data whose signature and chain hold: a small value with a stable
/// name, in the spirit of swift-certificates' `VerifierPolicy`.
///
/// ``SignedDataExpectations`` composes the built-in checks from its fields (bundle id,
/// environment, `appAppleId`, maximum age, a notification's nested data, product,
/// transaction) and runs any the caller adds after them. Every kind of signed data is checked
/// by the same list: each check reads the ``SignedDataClaims`` (which say the kind) and decides
/// what applies — a renewal info names no bundle id, an app transaction names no product.
/// The first failure is the verdict; ``SignedDataVerificationReport/checks`` lists every result.
///
/// A check the caller did not ask for, or one that does not apply to the kind, answers
/// `ExpectationResult.notChecked(_:)`, never an error. A caller's own check
/// that fails typically answers ``SignedDataError/Code/expectationNotMet`` with its name as
/// the field:
///
/// ```swift
/// struct OnlyProducts: SignedDataExpectation {
///     let name = "product_catalog"
///     let catalog: Set<String>
///     func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError> {
///         guard let unknown = claims.productIds.first(where: { !catalog.contains($0) }) else {
///             return .holds("every product is in the catalog")
///         }
///         return .fails(SignedDataError(.expectationNotMet, field: name, reason: "\(unknown) is not sold"), detail: unknown)
///     }
/// }
/// ```
public protocol SignedDataExpectation: Sendable {
    /// The name reports use: snake case, stable (`bundle_id`, `max_age`, …).
    var name: String { get }

    /// Evaluates the check against what signed data whose signature and chain hold claims.
    ///
    /// - Parameter claims: What the payload claims, with its kind and the verifier's clock.
    /// - Returns: Whether the check holds, was not checked, or fails (with the error).
    func evaluate(_ claims: SignedDataClaims) -> ExpectationResult<SignedDataError>
}

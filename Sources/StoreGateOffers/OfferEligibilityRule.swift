/// Whether a customer may have an offer signed, and why not.
public enum OfferEligibility: Sendable, Hashable {
    /// Sign it.
    case eligible
    /// Refuse, with a reason the caller may show (never a secret).
    case ineligible(reason: String)
}

/// Decides whether to sign an offer for a customer, such as "promotional offers only for
/// accounts that once held the subscription group" (the ledger knows).
///
/// ``OfferSigningService`` asks the rule before signing. A rule that throws is not taken as
/// a yes: the signature is refused with ``OfferSigningError/Code/eligibilityUnavailable``.
public protocol OfferEligibilityRule: Sendable {
    /// The decision for `request` made on behalf of `account` (the caller's account id, when
    /// it names one).
    func decide(_ request: OfferSignatureRequest, account: String?) async throws -> OfferEligibility
}

/// An ``OfferEligibilityRule`` written as a closure.
public struct ClosureOfferEligibilityRule: OfferEligibilityRule {
    private let body: @Sendable (OfferSignatureRequest, String?) async throws -> OfferEligibility

    /// Creates a rule from a closure.
    public init(_ body: @escaping @Sendable (OfferSignatureRequest, String?) async throws -> OfferEligibility) {
        self.body = body
    }

    /// Runs the closure.
    public func decide(_ request: OfferSignatureRequest, account: String?) async throws -> OfferEligibility {
        try await body(request, account)
    }
}

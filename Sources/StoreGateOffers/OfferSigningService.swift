/// Signs offers on behalf of customers, asking an optional ``OfferEligibilityRule`` first:
/// what `POST /v1/offers/sign` and `storegate offers sign` call.
public struct OfferSigningService: Sendable {
    /// The signer.
    public let signer: OfferSigner
    /// The rule asked before each signature; `nil` signs every valid request.
    public let eligibility: (any OfferEligibilityRule)?

    /// Creates a service.
    public init(signer: OfferSigner, eligibility: (any OfferEligibilityRule)? = nil) {
        self.signer = signer
        self.eligibility = eligibility
    }

    /// Asks the rule, then signs.
    ///
    /// - Parameters:
    ///   - request: What to sign.
    ///   - account: The customer's account id, for the rule.
    /// - Throws: ``OfferSigningError/Code/ineligible`` with the rule's reason;
    ///   ``OfferSigningError/Code/eligibilityUnavailable`` when the rule failed (nothing is
    ///   signed then); what the signer throws.
    public func sign(_ request: OfferSignatureRequest, account: String?) async throws(OfferSigningError) -> OfferSignature {
        if let eligibility {
            let decision: OfferEligibility
            do {
                decision = try await eligibility.decide(request, account: account)
            } catch {
                throw OfferSigningError(.eligibilityUnavailable, reason: "the eligibility rule could not decide")
            }
            if case .ineligible(let reason) = decision {
                throw OfferSigningError(.ineligible, reason: reason)
            }
        }
        return try sign(request)
    }

    /// Signs without asking the rule.
    public func sign(_ request: OfferSignatureRequest) throws(OfferSigningError) -> OfferSignature {
        switch request {
        case .promotionalOfferV1(let productId, let offerIdentifier, let applicationUsername):
            return .promotionalOfferV1(try signer.promotionalOfferV1(productId: productId, offerIdentifier: offerIdentifier, applicationUsername: applicationUsername))
        case .promotionalOfferV2(let productId, let offerIdentifier, let transactionId):
            return .jws(kind: .promotionalOfferV2, compact: try signer.promotionalOfferV2(productId: productId, offerIdentifier: offerIdentifier, transactionId: transactionId))
        case .introductoryOfferEligibility(let productId, let allow, let transactionId):
            return .jws(
                kind: .introductoryOfferEligibility,
                compact: try signer.introductoryOfferEligibility(productId: productId, allowIntroductoryOffer: allow, transactionId: transactionId)
            )
        case .advancedCommerceInAppRequest(let body):
            return .jws(kind: .advancedCommerceInAppRequest, compact: try signer.advancedCommerceInAppRequest(body))
        }
    }
}

/// One signature a caller asks for: what ``OfferSigningService`` signs and what an
/// ``OfferEligibilityRule`` decides on.
public enum OfferSignatureRequest: Sendable, Hashable {
    /// A StoreKit 1 promotional offer (`SKPaymentDiscount`).
    case promotionalOfferV1(productId: String, offerIdentifier: String, applicationUsername: String)
    /// A StoreKit 2 promotional offer.
    case promotionalOfferV2(productId: String, offerIdentifier: String, transactionId: String?)
    /// A StoreKit 2 introductory offer eligibility decision.
    case introductoryOfferEligibility(productId: String, allowIntroductoryOffer: Bool, transactionId: String)
    /// An Advanced Commerce API in-app request (its JSON object bytes).
    case advancedCommerceInAppRequest(request: [UInt8])

    /// The kind, as a stable snake-case name (request bodies, metrics, logs).
    public var kind: OfferSignatureKind {
        switch self {
        case .promotionalOfferV1: return .promotionalOfferV1
        case .promotionalOfferV2: return .promotionalOfferV2
        case .introductoryOfferEligibility: return .introductoryOfferEligibility
        case .advancedCommerceInAppRequest: return .advancedCommerceInAppRequest
        }
    }

    /// The product the signature is for, when the kind names one.
    public var productId: String? {
        switch self {
        case .promotionalOfferV1(let productId, _, _), .promotionalOfferV2(let productId, _, _),
             .introductoryOfferEligibility(let productId, _, _):
            return productId
        case .advancedCommerceInAppRequest:
            return nil
        }
    }
}

/// The four kinds of signature StoreGate makes.
public enum OfferSignatureKind: String, Sendable, Hashable, CaseIterable, Codable {
    /// StoreKit 1 promotional offer.
    case promotionalOfferV1 = "promotional_offer_v1"
    /// StoreKit 2 promotional offer (JWS).
    case promotionalOfferV2 = "promotional_offer_v2"
    /// StoreKit 2 introductory offer eligibility (JWS).
    case introductoryOfferEligibility = "introductory_offer_eligibility"
    /// Advanced Commerce API in-app request (JWS).
    case advancedCommerceInAppRequest = "advanced_commerce_in_app_request"
}

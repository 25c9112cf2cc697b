import Foundation
import StoreGateLedger
import StoreGateOffers

/// Which customers `POST /v1/offers/sign` signs a promotional offer for
/// (`STOREGATE_OFFER_ELIGIBILITY`), decided from the ledger.
///
/// Only promotional offers (StoreKit 1 and 2) are subject to it: an introductory-offer
/// eligibility signature states its own answer, and an Advanced Commerce request is the
/// caller's. The rule compares subscription groups as the ledger knows them (the catalog's
/// `subscriptionGroup`, else Apple's), so name the groups in `STOREGATE_PRODUCTS_FILE`.
public enum OfferEligibilityPolicy: String, Sendable, Hashable, CaseIterable {
    /// Every valid request is signed.
    case any
    /// Only for an account that holds or once held a subscription in the offer's group.
    case subscribers
    /// Only for an account that once held the group and is not entitled to it now (win-back).
    case lapsed
}

/// ``OfferEligibilityPolicy`` as an `OfferEligibilityRule` over the ledger.
struct LedgerOfferEligibility: OfferEligibilityRule {
    let policy: OfferEligibilityPolicy
    let ledger: any Ledger
    let catalog: CatalogStore
    let now: @Sendable () -> Date

    func decide(_ request: OfferSignatureRequest, account: String?) async throws -> OfferEligibility {
        switch request {
        case .promotionalOfferV1, .promotionalOfferV2: break
        case .introductoryOfferEligibility, .advancedCommerceInAppRequest: return .eligible
        }
        guard policy != .any, let productId = request.productId else { return .eligible }
        guard let account else {
            return .ineligible(reason: "STOREGATE_OFFER_ELIGIBILITY=\(policy.rawValue) decides per account: name the 'account'")
        }
        let id = try AccountID(account)
        let group = catalog.current.subscriptionGroup(for: productId, stated: nil)
        let held = try await ledger.entitlements(for: id, at: now()).subscriptions.filter {
            $0.subscriptionGroup == group || $0.productId == productId
        }
        guard !held.isEmpty else {
            return .ineligible(reason: "account '\(account)' never held a subscription in group '\(group)'")
        }
        if policy == .lapsed, held.contains(where: { $0.state.isEntitled }) {
            return .ineligible(reason: "account '\(account)' is subscribed to group '\(group)' now; the offer is for lapsed subscribers")
        }
        return .eligible
    }
}

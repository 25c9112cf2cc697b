public import Foundation
import StoreGateCore

extension AppStoreServerAPIClient {
    /// Extend a Subscription Renewal Date: `PUT /inApps/v1/subscriptions/extend/{originalTransactionId}`,
    /// moving one customer's active subscription's renewal date by up to 90 days (as a
    /// goodwill gesture, or after an outage). Apple allows two extensions per customer and
    /// subscription a year.
    ///
    /// - Throws: ``AppStoreClientError/Code/invalidRequest`` before calling Apple when the
    ///   request breaks Apple's rules (1–90 days, a documented reason, a 1–128 character
    ///   identifier); ``AppStoreClientError/Code/apiError`` with Apple's code (4030004
    ///   ineligible, 4030005 too many extensions, 4030007 Family Sharing, 4040005 not found,
    ///   …); ``AppStoreClientError/Code/transactionNotFound`` when Apple's answer is about
    ///   another subscription; anything a call throws.
    public func extendSubscriptionRenewalDate(
        originalTransactionId: String, _ request: ExtendRenewalDateRequest
    ) async throws(AppStoreClientError) -> ExtendRenewalDateResponse {
        try request.validate()
        let path = "/inApps/v1/subscriptions/extend/" + (try Self.pathSegment(originalTransactionId, name: "original transaction id"))
        let body = try Self.encode(request.wire, what: "the extension request")
        let wire = try await call(ServerAPIWire.ExtendRenewalDateResponse.self, method: "PUT", path: path, body: body)
        if let answered = wire.originalTransactionId, answered != originalTransactionId {
            throw AppStoreClientError(.transactionNotFound, reason: "Apple's answer is for another subscription", environment: environment)
        }
        guard let success = wire.success else {
            throw AppStoreClientError(.malformedReply, reason: "the extension answer has no success member", environment: environment)
        }
        return ExtendRenewalDateResponse(
            originalTransactionId: wire.originalTransactionId,
            webOrderLineItemId: wire.webOrderLineItemId,
            success: success,
            effectiveDate: wire.effectiveDate.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        )
    }

    /// Extend Subscription Renewal Dates for All Active Subscribers:
    /// `POST /inApps/v1/subscriptions/extend/mass`. Apple accepts the request and works
    /// through it over hours; follow it with
    /// ``renewalDateExtensionStatus(requestIdentifier:productId:)``.
    ///
    /// - Returns: The request identifier Apple acknowledged (the one sent).
    /// - Throws: ``AppStoreClientError/Code/invalidRequest`` before calling Apple when the
    ///   request breaks Apple's rules; ``AppStoreClientError/Code/apiError`` with Apple's
    ///   code; ``AppStoreClientError/Code/malformedReply`` when Apple acknowledges another
    ///   identifier; anything a call throws.
    public func extendRenewalDateForAllActiveSubscribers(_ request: MassExtendRenewalDateRequest) async throws(AppStoreClientError) -> String {
        try request.validate()
        let body = try Self.encode(request.wire, what: "the mass extension request")
        let wire = try await call(ServerAPIWire.MassExtendRenewalDateResponse.self, method: "POST", path: "/inApps/v1/subscriptions/extend/mass", body: body)
        guard wire.requestIdentifier == request.requestIdentifier else {
            throw AppStoreClientError(.malformedReply, reason: "Apple acknowledged another request identifier", environment: environment)
        }
        return request.requestIdentifier
    }

    /// Get Status of Subscription Renewal Date Extensions:
    /// `GET /inApps/v1/subscriptions/extend/mass/{productId}/{requestIdentifier}`.
    ///
    /// - Throws: ``AppStoreClientError/Code/apiError`` with 4040009
    ///   (``AppStoreAPIErrorCode/statusRequestNotFound``) for an identifier Apple does not
    ///   know; ``AppStoreClientError/Code/malformedReply`` when the answer is about another
    ///   request; anything a call throws.
    public func renewalDateExtensionStatus(requestIdentifier: String, productId: String) async throws(AppStoreClientError) -> MassExtendRenewalDateStatusResponse {
        try ExtendRenewalDateRequest.validate(requestIdentifier: requestIdentifier)
        let path = "/inApps/v1/subscriptions/extend/mass/" + (try Self.pathSegment(productId, name: "product id"))
            + "/" + (try Self.pathSegment(requestIdentifier, name: "request identifier"))
        let wire = try await call(ServerAPIWire.MassExtendRenewalDateStatusResponse.self, method: "GET", path: path)
        guard wire.requestIdentifier == nil || wire.requestIdentifier == requestIdentifier else {
            throw AppStoreClientError(.malformedReply, reason: "the status is for another request identifier", environment: environment)
        }
        return MassExtendRenewalDateStatusResponse(
            requestIdentifier: requestIdentifier,
            complete: wire.complete ?? false,
            completeDate: wire.completeDate.map { Date(timeIntervalSince1970: Double($0) / 1000) },
            succeededCount: wire.succeededCount,
            failedCount: wire.failedCount
        )
    }
}

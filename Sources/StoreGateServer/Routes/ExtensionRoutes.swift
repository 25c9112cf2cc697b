import Foundation
import HTTPTypes
import Hummingbird
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateLedger
import StoreGateSync

/// `POST …/subscriptions/{originalTransactionId}/extend` and the mass extension (`ExtensionRequest`).
struct ExtensionBody: JSONRequestBody {
    let days: Int
    let reason: ExtendReasonCode
    let requestIdentifier: String
    let productId: String?
    let storefronts: [String]

    init(_ object: RequestObject) throws(APIError) {
        try object.rejectUnknownMembers(["extendByDays", "extendReasonCode", "requestIdentifier", "productId", "storefrontCountryCodes"])
        guard let days = try object.optionalInteger("extendByDays") else {
            throw APIError.badField("extendByDays", .missingField, "'extendByDays' is required (1...90)")
        }
        guard (1...ExtendRenewalDateRequest.maximumDays).contains(days) else {
            throw APIError.badField("extendByDays", .invalidField, "'extendByDays' is 1...90 (Apple's limit)")
        }
        self.days = days
        let reasonName = try object.string("extendReasonCode")
        guard let reason = ExtendReasonCode.named.first(where: { $0.name == reasonName })?.code else {
            throw APIError.badField("extendReasonCode", .invalidField, "'extendReasonCode' is one of \(ExtendReasonCode.named.map(\.name).joined(separator: ", "))")
        }
        self.reason = reason
        let identifier = try object.optionalString("requestIdentifier") ?? UUID().uuidString.lowercased()
        guard (1...ExtendRenewalDateRequest.maximumRequestIdentifierLength).contains(identifier.count) else {
            throw APIError.badField("requestIdentifier", .invalidField, "'requestIdentifier' is 1...128 characters")
        }
        requestIdentifier = identifier
        productId = try object.optionalString("productId")
        storefronts = try object.optionalStrings("storefrontCountryCodes") ?? []
    }

    /// The reason's name, as the request gave it.
    var reasonName: String { ExtendReasonCode.named.first { $0.code == reason }?.name ?? "\(reason.rawValue)" }
}

/// A single extension's reply (`ExtensionReply`).
struct ExtensionReply: JSONWritable {
    let originalTransactionId: String
    let answer: ExtendRenewalDateResponse
    let requestIdentifier: String
    let refreshed: Bool

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("originalTransactionId", originalTransactionId)
            json.member("webOrderLineItemId", answer.webOrderLineItemId)
            json.member("success", answer.success)
            json.member("effectiveDate", answer.effectiveDate)
            json.member("requestIdentifier", requestIdentifier)
            json.member("refreshed", refreshed)
        }
    }
}

/// A mass extension's status (`MassExtensionStatus`).
struct MassExtensionReply: JSONWritable {
    let productId: String
    let status: MassExtendRenewalDateStatusResponse

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("productId", productId)
            json.member("requestIdentifier", status.requestIdentifier)
            json.member("complete", status.complete)
            json.member("completeDate", status.completeDate)
            json.member("succeededCount", status.succeededCount)
            json.member("failedCount", status.failedCount)
        }
    }
}

extension Endpoints {
    /// Extends one customer's subscription at Apple, records who did it and why in the
    /// account's events (`subscription.extended`), then refreshes the account so the ledger
    /// holds Apple's new expiry.
    @Sendable func extendSubscription(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let account = try Self.account(try Self.pathParameter("account", context), field: "account")
        let original = try Self.pathParameter("originalTransactionId", context)
        let body = try await decode(ExtensionBody.self, request)
        guard body.productId == nil, body.storefronts.isEmpty else {
            throw APIError.badField("productId", .unknownField, "'productId' and 'storefrontCountryCodes' belong to a mass extension")
        }
        guard let appStore else {
            throw APIError(.conflict, .appstoreNotConfigured, "extending needs App Store Server API credentials (STOREGATE_APPSTORE_*) and STOREGATE_SYNC on")
        }
        let family = try await subscriptionFamily(original, of: account, context: context)
        guard let client = appStore.serving(family.environment) else {
            throw APIError(.conflict, .appstoreNotConfigured, "no App Store Server API client serves \(family.environment.rawValue)")
        }
        let answer: ExtendRenewalDateResponse
        do throws(AppStoreClientError) {
            answer = try await client.extendSubscriptionRenewalDate(
                originalTransactionId: original,
                ExtendRenewalDateRequest(extendByDays: body.days, extendReasonCode: body.reason, requestIdentifier: body.requestIdentifier)
            )
        } catch {
            throw Self.apiError(error)
        }
        guard answer.success else {
            throw APIError(.unprocessableContent, .appleRefused, "Apple answered that the renewal date was not extended", field: "originalTransactionId")
        }
        let action = SupportAction(
            account: account, productId: family.productId, environment: family.environment, originalTransactionId: original,
            support: LedgerEvent.Support(
                action: "extend_renewal_date", reason: body.reasonName, actor: context.apiKeyName, days: body.days,
                requestIdentifier: body.requestIdentifier, effectiveDate: answer.effectiveDate
            ),
            occurredAt: now()
        )
        do throws(LedgerError) {
            try await ledger.recordSupportAction(action)
        } catch {
            // Apple extended it: the reply must say so even when the audit record failed.
            context.logger.error("an extension Apple made could not be recorded", metadata: ["account": "\(account.rawValue)", "error": "\(error.code)"])
        }
        let refreshed: Bool
        do throws(AccountRefreshError) {
            _ = try await appStore.refresher.refresh(account)
            refreshed = true
        } catch {
            // The RENEWAL_EXTENDED notification (webhook or sync) brings the new expiry later.
            refreshed = false
        }
        context.logger.info("subscription extended", metadata: [
            "account": "\(account.rawValue)", "transaction.original_id": "\(original)", "days": "\(body.days)", "reason": "\(body.reasonName)",
        ])
        return JSONReply.response(ExtensionReply(originalTransactionId: original, answer: answer, requestIdentifier: body.requestIdentifier, refreshed: refreshed))
    }

    /// Asks Apple to extend every active subscriber of a product: 202 with the request's
    /// identifier; its progress at `GET /v1/subscriptions/extensions/{productId}/{requestIdentifier}`.
    @Sendable func extendAllSubscriptions(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let body = try await decode(ExtensionBody.self, request)
        guard let productId = body.productId else {
            throw APIError.badField("productId", .missingField, "a mass extension names its 'productId'")
        }
        let client = try massExtensionClient(request)
        do throws(AppStoreClientError) {
            _ = try await client.extendRenewalDateForAllActiveSubscribers(MassExtendRenewalDateRequest(
                extendByDays: body.days, extendReasonCode: body.reason, requestIdentifier: body.requestIdentifier, productId: productId,
                storefrontCountryCodes: body.storefronts
            ))
        } catch {
            throw Self.apiError(error)
        }
        context.logger.notice("mass extension requested", metadata: [
            "product": "\(productId)", "request.id": "\(body.requestIdentifier)", "days": "\(body.days)", "actor": "\(context.apiKeyName ?? "-")",
        ])
        return JSONReply.response(
            MassExtensionReply(productId: productId, status: MassExtendRenewalDateStatusResponse(
                requestIdentifier: body.requestIdentifier, complete: false, completeDate: nil, succeededCount: nil, failedCount: nil
            )),
            status: .accepted
        )
    }

    /// A mass extension's progress, from Apple.
    @Sendable func massExtensionStatus(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let productId = try Self.pathParameter("productId", context)
        let identifier = try Self.pathParameter("requestIdentifier", context)
        let client = try massExtensionClient(request)
        do throws(AppStoreClientError) {
            return JSONReply.response(MassExtensionReply(productId: productId, status: try await client.renewalDateExtensionStatus(requestIdentifier: identifier, productId: productId)))
        } catch {
            throw Self.apiError(error)
        }
    }

    /// The client of `?environment=` (production unless named).
    private func massExtensionClient(_ request: Request) throws(APIError) -> AppStoreServerAPIClient {
        guard let appStore else {
            throw APIError(.conflict, .appstoreNotConfigured, "extending needs App Store Server API credentials (STOREGATE_APPSTORE_*) and STOREGATE_SYNC on")
        }
        let name = request.uri.queryParameters["environment"].map(String.init) ?? "production"
        guard let environment = AppStoreEnvironment(name: name), let client = appStore.client(environment) else {
            throw APIError(.badRequest, .invalidQueryParameter, "'environment' is production or sandbox, and must be configured", field: "environment")
        }
        return client
    }

    /// The account's auto-renewable family `original`, in whichever accepted environment the
    /// ledger holds it; 404 when the account does not own such a subscription.
    private func subscriptionFamily(_ original: String, of account: AccountID, context: StoreGateRequestContext) async throws(APIError) -> RecordedTransaction {
        for environment in [AppStoreEnvironment.production, .sandbox, .test, .xcode] where configuration.environments.contains(environment) {
            let found: RecordedTransaction?
            do throws(LedgerError) {
                found = try await ledger.transaction(original, in: environment)
            } catch {
                throw APIError.ledger(error, logger: context.logger)
            }
            if let found, found.account == account, found.productType == .autoRenewable {
                return found
            }
        }
        throw APIError(.notFound, .subscriptionNotFound, "the account owns no auto-renewable subscription with original transaction id \(original.prefix(64))", field: "originalTransactionId")
    }

    /// An App Store call's failure as a reply: retryable ones 503, Apple's refusals 422 with its code.
    static func apiError(_ error: AppStoreClientError) -> APIError {
        if error.isRetryable || error.code == .rateLimited {
            var reply = APIError(.serviceUnavailable, APIErrorCode(SyncError.Code.appleUnavailable), "Apple is unavailable: \(error.code)")
            reply.isRetryable = true
            if let retryAfter = error.retryAfter {
                reply.headers[.retryAfter] = "\(max(1, Int(retryAfter.timeIntervalSinceNow.rounded(.up))))"
            }
            return reply
        }
        if error.code == .invalidRequest {
            return APIError(.badRequest, .invalidField, error.reason)
        }
        let apple = error.apiError.map { " (Apple's errorCode \($0.rawValue))" } ?? ""
        return APIError(.unprocessableContent, .appleRefused, "Apple refused: \(error.code)\(apple)")
    }

    /// The extension routes (permission `subscriptions.extend`).
    var extensionRoutes: [Route] {
        [
            Route(.post, "/v1/accounts/:account/subscriptions/:originalTransactionId/extend", .apiKey(.subscriptionsExtend), extendSubscription),
            Route(.post, "/v1/subscriptions/extensions", .apiKey(.subscriptionsExtend), extendAllSubscriptions),
            Route(.get, "/v1/subscriptions/extensions/:productId/:requestIdentifier", .apiKey(.subscriptionsExtend), massExtensionStatus),
        ]
    }
}

import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateTestSupport
import Testing

/// Issue 33, item 2: Extend a Subscription Renewal Date, Extend Renewal Dates for All Active
/// Subscribers and Get Status of Subscription Renewal Date Extensions against the stand-in:
/// success, Apple's error codes and rules, 429 with Retry-After. (None of the three pages.)
@Suite("Server API: subscription renewal date extensions")
struct RenewalExtensionTests {
    static let active = "3200000000000001"

    static func seed(_ api: ServerAPIFixture, _ change: (inout AppleStandIn.PurchaseFixture) -> Void = { _ in }) -> Date {
        let expires = Date().addingTimeInterval(10 * 86_400)
        var purchase = AppleStandIn.PurchaseFixture(productId: "com.example.monthly", expiresDate: expires, webOrderLineItemId: "3200000010000001")
        change(&purchase)
        api.setData { $0.purchases[Self.active] = purchase }
        return expires
    }

    @Test("one subscription is extended; the same request identifier again extends nothing more")
    func extendOne() async throws {
        try await withServerAPI { api in
            let expires = Self.seed(api)
            let request = ExtendRenewalDateRequest(extendByDays: 7, extendReasonCode: .serviceIssueOrOutage, requestIdentifier: "a3c5e6d2-outage-1")
            let answer = try await api.client.extendSubscriptionRenewalDate(originalTransactionId: Self.active, request)
            #expect(answer.success)
            #expect(answer.originalTransactionId == Self.active)
            #expect(answer.webOrderLineItemId == "3200000010000001")
            let effective = try #require(answer.effectiveDate)
            #expect(abs(effective.timeIntervalSince(expires) - 7 * 86_400) < 0.001)
            let again = try await api.client.extendSubscriptionRenewalDate(originalTransactionId: Self.active, request)
            #expect(again == answer)
            #expect(api.standIn.purchase(Self.active, in: .sandbox)?.extensions == 1)
            let call = try #require(api.standIn.serverAPICalls.first)
            #expect(call.method == "PUT")
            #expect(call.route == "inApps/v1/subscriptions/extend")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(call.body)) as? [String: Any])
            #expect(body["extendByDays"] as? Int == 7)
            #expect(body["extendReasonCode"] as? Int == 3)
            #expect(body["requestIdentifier"] as? String == "a3c5e6d2-outage-1")
            #expect(body.count == 3)
        }
    }

    struct Refusal: Sendable, CustomTestStringConvertible {
        let id: String
        let familyShared: Bool
        let expired: Bool
        let extensions: Int
        let code: AppStoreAPIErrorCode
        let httpStatus: Int
        var testDescription: String { "\(code.rawValue)" }
    }

    @Test("Apple's refusals of one extension are typed and not retried", arguments: [
        Refusal(id: active, familyShared: true, expired: false, extensions: 0, code: .familySharedSubscriptionExtensionIneligible, httpStatus: 403),
        Refusal(id: active, familyShared: false, expired: true, extensions: 0, code: .subscriptionExtensionIneligible, httpStatus: 403),
        Refusal(id: active, familyShared: false, expired: false, extensions: 2, code: .subscriptionMaxExtension, httpStatus: 403),
        Refusal(id: "3200000000000404", familyShared: false, expired: false, extensions: 0, code: .originalTransactionIdNotFound, httpStatus: 404),
        Refusal(id: "not-digits", familyShared: false, expired: false, extensions: 0, code: .invalidOriginalTransactionId, httpStatus: 400),
    ])
    func refusals(_ test: Refusal) async throws {
        try await withServerAPI { api in
            _ = Self.seed(api) {
                $0.isFamilyShared = test.familyShared
                $0.extensions = test.extensions
                if test.expired { $0.expiresDate = Date().addingTimeInterval(-86_400) }
            }
            let request = ExtendRenewalDateRequest(extendByDays: 3, extendReasonCode: .customerSatisfaction, requestIdentifier: UUID().uuidString)
            let error = await appStoreError { try await api.client.extendSubscriptionRenewalDate(originalTransactionId: test.id, request) }
            #expect(error?.code == .apiError)
            #expect(error?.apiError == test.code)
            #expect(error?.httpStatus == test.httpStatus)
            #expect(api.standIn.requestCount(.serverAPI) == 1)
        }
    }

    @Test("requests breaking Apple's rules are refused before calling Apple", arguments: [
        ExtendRenewalDateRequest(extendByDays: 0, extendReasonCode: .other, requestIdentifier: "r"),
        ExtendRenewalDateRequest(extendByDays: 91, extendReasonCode: .other, requestIdentifier: "r"),
        ExtendRenewalDateRequest(extendByDays: 5, extendReasonCode: ExtendReasonCode(rawValue: 4), requestIdentifier: "r"),
        ExtendRenewalDateRequest(extendByDays: 5, extendReasonCode: .other, requestIdentifier: ""),
        ExtendRenewalDateRequest(extendByDays: 5, extendReasonCode: .other, requestIdentifier: String(repeating: "x", count: 129)),
    ])
    func localRules(_ request: ExtendRenewalDateRequest) async throws {
        try await withServerAPI { api in
            _ = Self.seed(api)
            let error = await appStoreError { try await api.client.extendSubscriptionRenewalDate(originalTransactionId: Self.active, request) }
            #expect(error?.code == .invalidRequest)
            let mass = MassExtendRenewalDateRequest(
                extendByDays: request.extendByDays, extendReasonCode: request.extendReasonCode, requestIdentifier: request.requestIdentifier, productId: "p"
            )
            let massError = await appStoreError { try await api.client.extendRenewalDateForAllActiveSubscribers(mass) }
            #expect(massError?.code == .invalidRequest)
            #expect(api.standIn.serverAPICalls.isEmpty)
        }
    }

    @Test("the stand-in answers Apple's codes to bodies that break the rules (what the client never sends)")
    func standInRules() async throws {
        try await withServerAPI { api in
            _ = Self.seed(api)
            let transport = api.transport
            let token = try AppStoreServerAPIToken(credentials: api.credentials, issuedAt: Date(), lifetime: .seconds(600))
            for (body, code) in [
                (#"{"extendByDays":0,"extendReasonCode":1,"requestIdentifier":"r"}"#, AppStoreAPIErrorCode.invalidExtendByDays),
                (#"{"extendByDays":3,"extendReasonCode":9,"requestIdentifier":"r"}"#, .invalidExtendReasonCode),
                (#"{"extendByDays":3,"extendReasonCode":1}"#, .invalidRequestIdentifier),
            ] {
                let response = try await transport.send(
                    TransportRequest(
                        method: "PUT", url: api.standIn.serverAPIEndpoints.sandbox + "/inApps/v1/subscriptions/extend/" + Self.active,
                        headers: [.init("Authorization", "Bearer " + token.compact), .init("Content-Type", "application/json")], body: Array(body.utf8)
                    ),
                    deadline: .now + .seconds(30)
                )
                #expect(response.status == 400)
                let answer = try #require(try JSONSerialization.jsonObject(with: Data(response.body)) as? [String: Any])
                #expect(answer["errorCode"] as? Int == code.rawValue)
            }
        }
    }

    @Test("a mass extension extends the product's active subscribers in the storefronts asked, and its status completes")
    func mass() async throws {
        try await withServerAPI { api in
            let future = Date().addingTimeInterval(5 * 86_400)
            api.setData {
                $0.purchases["3300000000000001"] = .init(productId: "com.example.monthly", expiresDate: future, storefront: "USA")
                $0.purchases["3300000000000002"] = .init(productId: "com.example.monthly", expiresDate: future, storefront: "USA", extensions: 2)
                $0.purchases["3300000000000003"] = .init(productId: "com.example.monthly", expiresDate: future, storefront: "FRA")
                $0.purchases["3300000000000004"] = .init(productId: "com.example.monthly", expiresDate: Date().addingTimeInterval(-86_400))
                $0.purchases["3300000000000005"] = .init(productId: "com.example.yearly", expiresDate: future)
                $0.massExtensionPendingReads = 1
            }
            let request = MassExtendRenewalDateRequest(
                extendByDays: 14, extendReasonCode: .serviceIssueOrOutage, requestIdentifier: "outage-2026-05-01",
                productId: "com.example.monthly", storefrontCountryCodes: ["USA"]
            )
            let identifier = try await api.client.extendRenewalDateForAllActiveSubscribers(request)
            #expect(identifier == "outage-2026-05-01")
            _ = try await api.client.extendRenewalDateForAllActiveSubscribers(request)  // acknowledged again, applied once
            let pending = try await api.client.renewalDateExtensionStatus(requestIdentifier: identifier, productId: "com.example.monthly")
            #expect(!pending.complete)
            #expect(pending.completeDate == nil)
            let done = try await api.client.renewalDateExtensionStatus(requestIdentifier: identifier, productId: "com.example.monthly")
            #expect(done.complete)
            #expect(done.requestIdentifier == identifier)
            #expect(done.succeededCount == 1)
            #expect(done.failedCount == 1)
            #expect(done.completeDate != nil)
            #expect(api.standIn.purchase("3300000000000001", in: .sandbox)?.extensions == 1)
            #expect(api.standIn.purchase("3300000000000003", in: .sandbox)?.extensions == 0)
            let first = try #require(api.standIn.serverAPICalls.first)
            let body = try #require(try JSONSerialization.jsonObject(with: Data(first.body)) as? [String: Any])
            #expect(body["productId"] as? String == "com.example.monthly")
            #expect(body["storefrontCountryCodes"] as? [String] == ["USA"])
            #expect(api.standIn.serverAPICalls.map(\.route) == [
                "inApps/v1/subscriptions/extend/mass", "inApps/v1/subscriptions/extend/mass",
                "inApps/v1/subscriptions/extend/mass/status", "inApps/v1/subscriptions/extend/mass/status",
            ])
        }
    }

    @Test("an unknown mass extension request, or another product's, is Apple's 4040009")
    func statusNotFound() async throws {
        try await withServerAPI { api in
            let error = await appStoreError { try await api.client.renewalDateExtensionStatus(requestIdentifier: "never-sent", productId: "com.example.monthly") }
            #expect(error?.code == .apiError)
            #expect(error?.apiError == .statusRequestNotFound)
            #expect(error?.httpStatus == 404)
            let request = MassExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: .other, requestIdentifier: "m-1", productId: "com.example.monthly")
            _ = try await api.client.extendRenewalDateForAllActiveSubscribers(request)
            let other = await appStoreError { try await api.client.renewalDateExtensionStatus(requestIdentifier: "m-1", productId: "com.example.yearly") }
            #expect(other?.apiError == .statusRequestNotFound)
        }
    }

    @Test("a storefront code that is not three capital letters is refused before calling Apple", arguments: ["US", "usa", "USAA", ""])
    func storefrontRule(_ code: String) async throws {
        try await withServerAPI { api in
            let request = MassExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: .other, requestIdentifier: "m", productId: "p", storefrontCountryCodes: [code])
            let error = await appStoreError { try await api.client.extendRenewalDateForAllActiveSubscribers(request) }
            #expect(error?.code == .invalidRequest)
            #expect(api.standIn.serverAPICalls.isEmpty)
        }
    }

    @Test("each extension endpoint waits out a 429 until Retry-After", arguments: ["one", "mass", "status"])
    func rateLimited(_ endpoint: String) async throws {
        try await withServerAPI { api in
            _ = Self.seed(api)
            let mass = MassExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: .other, requestIdentifier: "m-429", productId: "com.example.monthly")
            if endpoint == "status" { _ = try await api.client.extendRenewalDateForAllActiveSubscribers(mass) }
            let before = api.standIn.requestCount(.serverAPI)
            api.standIn.failNext(1, of: .serverAPI, with: .rateLimited(retryAfter: String(Int64((Date().timeIntervalSince1970 + 0.3) * 1000))))
            let started = ContinuousClock.now
            switch endpoint {
            case "one":
                let answer = try await api.client.extendSubscriptionRenewalDate(
                    originalTransactionId: Self.active, ExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: .other, requestIdentifier: "o-429")
                )
                #expect(answer.success)
            case "mass":
                let acknowledged = try await api.client.extendRenewalDateForAllActiveSubscribers(mass)
                #expect(acknowledged == "m-429")
            default:
                let status = try await api.client.renewalDateExtensionStatus(requestIdentifier: "m-429", productId: "com.example.monthly")
                #expect(status.requestIdentifier == "m-429")
            }
            #expect(ContinuousClock.now - started >= .milliseconds(200))
            #expect(api.standIn.requestCount(.serverAPI) == before + 2)
        }
    }

    @Test("Apple's 5000000 on a mass extension is not retried; 5000001 is")
    func internalErrors() async throws {
        try await withServerAPI { api in
            let request = MassExtendRenewalDateRequest(extendByDays: 1, extendReasonCode: .other, requestIdentifier: "m-500", productId: "com.example.monthly")
            api.standIn.failNext(1, of: .serverAPI, with: .apiError(.generalInternal, httpStatus: 500))
            let error = await appStoreError { try await api.client.extendRenewalDateForAllActiveSubscribers(request) }
            #expect(error?.apiError == .generalInternal)
            #expect(api.standIn.requestCount(.serverAPI) == 1)
            api.standIn.failNext(1, of: .serverAPI, with: .apiError(.generalInternalRetryable, httpStatus: 500))
            let acknowledged = try await api.client.extendRenewalDateForAllActiveSubscribers(request)
            #expect(acknowledged == "m-500")
            #expect(api.standIn.requestCount(.serverAPI) == 3)
        }
    }
}

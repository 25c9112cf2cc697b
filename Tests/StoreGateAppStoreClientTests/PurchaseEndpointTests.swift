import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

/// Issue 33, item 2: Get App Transaction Info, Set App Account Token and Finish Transaction
/// against the stand-in: success, Apple's error codes, 429 with Retry-After. (None of the
/// three pages.)
@Suite("Server API: app transaction, app account token, finish transaction")
struct PurchaseEndpointTests {
    static let subscription = "3100000000000001"
    static let renewal = "3100000000000002"

    static func seed(_ api: ServerAPIFixture, familyShared: Bool = false) {
        api.setData {
            $0.purchases[Self.subscription] = .init(productId: "com.example.monthly", transactionIds: [Self.renewal], isFamilyShared: familyShared)
        }
    }

    @Test("Get App Transaction Info returns the verified app transaction for any of the customer's ids")
    func appTransaction() async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.minter.mint(json: JWSPayloads.appTransaction(bundleId: appBundleId))
            api.setData {
                $0.appTransactions[Self.subscription] = signed
                $0.appTransactions["704000000000000001"] = signed
            }
            for id in [Self.subscription, "704000000000000001"] {
                let info = try await api.client.appTransactionInfo(transactionId: id)
                #expect(info.bundleId == appBundleId)
                #expect(info.appTransaction.appTransactionId == "704000000000000001")
                #expect(info.appTransaction.applicationVersion == "42")
                #expect(info.environment == .test)  // the test CA signed it: never reported as Sandbox
            }
            #expect(api.standIn.serverAPICalls.allSatisfy { $0.route == "inApps/v1/transactions/appTransactions" && $0.method == "GET" })
        }
    }

    @Test("an unknown customer is Apple's 4040019, not retried")
    func appTransactionMissing() async throws {
        try await withServerAPI { api in
            let error = await appStoreError { try await api.client.appTransactionInfo(transactionId: "3100000000000404") }
            #expect(error?.code == .apiError)
            #expect(error?.apiError == .appTransactionDoesNotExist)
            #expect(error?.httpStatus == 404)
            #expect(api.standIn.requestCount(.serverAPI) == 1)
        }
    }

    @Test("an app transaction for another app, or from an untrusted signer, is refused", arguments: ["other-app", "stranger"])
    func appTransactionForged(_ kind: String) async throws {
        try await withServerAPI { api in
            let signed: String
            if kind == "other-app" {
                signed = try api.payloads.minter.mint(json: JWSPayloads.appTransaction(bundleId: "com.attacker.app"))
            } else {
                let stranger = try JWSMinter(authority: TestCertificateAuthority(keyKind: .p256, shape: .init(label: "Stranger")))
                signed = try stranger.mint(json: JWSPayloads.appTransaction(bundleId: appBundleId))
            }
            api.setData { $0.appTransactions[Self.subscription] = signed }
            let error = await appStoreError { try await api.client.appTransactionInfo(transactionId: Self.subscription) }
            #expect(error?.code == .signedPayloadRejected)
        }
    }

    @Test("a verifier that does not verify app transactions refuses them (fails closed)")
    func appTransactionOldVerifier() async throws {
        let payloads = try SignedPayloads()
        let old = ServerAPIClientTests.CredulousVerifier(inner: try payloads.verifier())
        try await withServerAPI(verifier: old) { api in
            let signed = try api.payloads.minter.mint(json: JWSPayloads.appTransaction(bundleId: appBundleId))
            api.setData { $0.appTransactions[Self.subscription] = signed }
            let error = await appStoreError { try await api.client.appTransactionInfo(transactionId: Self.subscription) }
            #expect(error?.code == .signedPayloadRejected)
        }
    }

    @Test("Set App Account Token puts the token, lower case, on the original transaction")
    func setToken() async throws {
        try await withServerAPI { api in
            Self.seed(api)
            let token = try #require(UUID(uuidString: "7E3FB20B-4CDB-47CC-936D-99D65F608138"))
            try await api.client.setAppAccountToken(originalTransactionId: Self.subscription, appAccountToken: token)
            #expect(api.standIn.purchase(Self.subscription, in: .sandbox)?.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
            let call = try #require(api.standIn.serverAPICalls.last)
            #expect(call.method == "PUT")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(call.body)) as? [String: Any])
            #expect(body as? [String: String] == ["appAccountToken": "7e3fb20b-4cdb-47cc-936d-99d65f608138"])
        }
    }

    struct TokenRefusal: Sendable, CustomTestStringConvertible {
        let id: String
        let familyShared: Bool
        let code: AppStoreAPIErrorCode
        let httpStatus: Int
        var testDescription: String { "\(code.rawValue)" }
    }

    @Test("Set App Account Token: Apple's refusals are typed and not retried", arguments: [
        TokenRefusal(id: renewal, familyShared: false, code: .transactionIdIsNotOriginalTransactionId, httpStatus: 400),
        TokenRefusal(id: "3100000000000404", familyShared: false, code: .transactionIdNotFound, httpStatus: 404),
        TokenRefusal(id: subscription, familyShared: true, code: .familyTransactionNotSupported, httpStatus: 400),
    ])
    func tokenRefusals(_ test: TokenRefusal) async throws {
        try await withServerAPI { api in
            Self.seed(api, familyShared: test.familyShared)
            let error = await appStoreError { try await api.client.setAppAccountToken(originalTransactionId: test.id, appAccountToken: UUID()) }
            #expect(error?.code == .apiError)
            #expect(error?.apiError == test.code)
            #expect(error?.httpStatus == test.httpStatus)
            #expect(error?.isRetryable == false)
            #expect(api.standIn.requestCount(.serverAPI) == 1)
        }
    }

    @Test("Finish Transaction posts the transaction id; Apple's 4040010 and 4000006 are typed")
    func finish() async throws {
        try await withServerAPI { api in
            Self.seed(api)
            try await api.client.finishTransaction(transactionId: Self.renewal)
            try await api.client.finishTransaction(transactionId: Self.renewal)  // harmless twice
            #expect(api.standIn.finishedTransactions.map(\.transactionId) == [Self.renewal, Self.renewal])
            #expect(api.standIn.serverAPICalls.allSatisfy { $0.method == "POST" && $0.route == "inApps/v1/transactions/finish" && $0.body.isEmpty })
            let missing = await appStoreError { try await api.client.finishTransaction(transactionId: "3100000000000404") }
            #expect(missing?.apiError == .transactionIdNotFound)
            let invalid = await appStoreError { try await api.client.finishTransaction(transactionId: "not-a-number") }
            #expect(invalid?.apiError == .invalidTransactionId)
            #expect(invalid?.httpStatus == 400)
            let empty = await appStoreError { try await api.client.finishTransaction(transactionId: "") }
            #expect(empty?.code == .invalidRequest)  // refused before calling Apple
            #expect(api.standIn.requestCount(.serverAPI) == 4)
        }
    }

    @Test("each endpoint waits out a 429 until Retry-After and then succeeds", arguments: ["app-transaction", "token", "finish"])
    func rateLimited(_ endpoint: String) async throws {
        try await withServerAPI { api in
            Self.seed(api)
            let signed = try api.payloads.minter.mint(json: JWSPayloads.appTransaction(bundleId: appBundleId))
            api.setData { $0.appTransactions[Self.subscription] = signed }
            let retryAt = Int64((Date().timeIntervalSince1970 + 0.3) * 1000)
            api.standIn.failNext(1, of: .serverAPI, with: .rateLimited(retryAfter: String(retryAt)))
            let started = ContinuousClock.now
            switch endpoint {
            case "app-transaction": _ = try await api.client.appTransactionInfo(transactionId: Self.subscription)
            case "token": try await api.client.setAppAccountToken(originalTransactionId: Self.subscription, appAccountToken: UUID())
            default: try await api.client.finishTransaction(transactionId: Self.subscription)
            }
            #expect(ContinuousClock.now - started >= .milliseconds(200))
            #expect(api.standIn.requestCount(.serverAPI) == 2)
        }
    }

    @Test("a 429 whose Retry-After is too far fails at once with the time", arguments: ["app-transaction", "token", "finish"])
    func rateLimitedTooLong(_ endpoint: String) async throws {
        try await withServerAPI { api in
            Self.seed(api)
            api.standIn.failAlways(.serverAPI, with: .rateLimited(retryAfter: String(Int64((Date().timeIntervalSince1970 + 3600) * 1000))))
            let error = await appStoreError { () async throws in
                switch endpoint {
                case "app-transaction": _ = try await api.client.appTransactionInfo(transactionId: Self.subscription)
                case "token": try await api.client.setAppAccountToken(originalTransactionId: Self.subscription, appAccountToken: UUID())
                default: try await api.client.finishTransaction(transactionId: Self.subscription)
                }
            }
            #expect(error?.code == .rateLimited)
            #expect(error?.retryAfter != nil)
            #expect(api.standIn.requestCount(.serverAPI) == 1)
        }
    }
}

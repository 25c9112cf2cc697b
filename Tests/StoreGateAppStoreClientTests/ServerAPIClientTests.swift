import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateSignedData
import StoreGateTestSupport
import Testing

@Suite("App Store Server API client against the stand-in")
struct ServerAPIClientTests {
    @Test("Get Transaction Info returns the verified transaction")
    func transactionInfo() async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.transaction("2000000000000001")
            api.setData { $0.transactions["2000000000000001"] = signed }
            let transaction = try await api.client.transactionInfo(transactionId: "2000000000000001")
            #expect(transaction.transactionId == "2000000000000001")
            #expect(transaction.bundleId == appBundleId)
            #expect(transaction.environment == .test)  // verified by the test CA, never "Sandbox"
            #expect(transaction.source == .signedTransaction)
        }
    }

    @Test("Apple's error code is typed and a missing transaction is not retried")
    func notFound() async throws {
        try await withServerAPI { api in
            let error = await appStoreError { try await api.client.transactionInfo(transactionId: "404") }
            #expect(error?.code == .apiError)
            #expect(error?.apiError == .transactionIdNotFound)
            #expect(error?.httpStatus == 404)
            #expect(error?.isRetryable == false)
            #expect(api.standIn.requestCount(.serverAPI) == 1)
        }
    }

    @Test("Apple's retryable error codes are retried", arguments: [AppStoreAPIErrorCode.generalInternalRetryable, .accountNotFoundRetryable, .appNotFoundRetryable, .originalTransactionIdNotFoundRetryable])
    func retryableCodes(code: AppStoreAPIErrorCode) async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.transaction("2000000000000001")
            api.setData { $0.transactions["2000000000000001"] = signed }
            api.standIn.failNext(2, of: .serverAPI, with: .apiError(code, httpStatus: code.rawValue >= 5000000 ? 500 : 404))
            let transaction = try await api.client.transactionInfo(transactionId: "2000000000000001")
            #expect(transaction.transactionId == "2000000000000001")
            #expect(api.standIn.requestCount(.serverAPI) == 3)
        }
    }

    @Test("Get Transaction History follows revision paging to the end")
    func historyPaging() async throws {
        try await withServerAPI { api in
            let ids = (1...7).map { "30000000000000\(10 + $0)" }
            let signed = try ids.map { try api.payloads.transaction($0, original: ids[0]) }
            api.setData {
                $0.history[ids[0]] = signed
                $0.historyPageSize = 3
            }
            let all = try await api.client.allTransactionHistory(transactionId: ids[0], query: TransactionHistoryQuery(sort: .ascending, productTypes: ["AUTO_RENEWABLE"]))
            #expect(all.map(\.transactionId) == ids)
            let calls = api.standIn.serverAPICalls.filter { $0.route == "inApps/v2/history" }
            #expect(calls.map { $0.query["revision"]?.first } == [nil, "r3", "r6"])
            #expect(calls.allSatisfy { $0.query["sort"] == ["ASCENDING"] && $0.query["productType"] == ["AUTO_RENEWABLE"] })
        }
    }

    @Test("paging stops at its page bound")
    func pagingBound() async throws {
        try await withServerAPI { api in
            let ids = (1...7).map { "30000000000000\(10 + $0)" }
            let signed = try ids.map { try api.payloads.transaction($0, original: ids[0]) }
            api.setData {
                $0.history[ids[0]] = signed
                $0.historyPageSize = 3
            }
            let error = await appStoreError { try await api.client.allTransactionHistory(transactionId: ids[0], maxPages: 2) }
            #expect(error?.code == .pagingLimitExceeded)
            #expect(api.standIn.requestCount(.serverAPI) == 2)
        }
    }

    @Test("Get Refund History follows revision paging to the end")
    func refundPaging() async throws {
        try await withServerAPI { api in
            let ids = (1...5).map { "40000000000000\(10 + $0)" }
            let signed = try ids.map { try api.payloads.transaction($0) }
            api.setData {
                $0.refunds["4000000000000011"] = signed
                $0.refundPageSize = 2
            }
            let all = try await api.client.allRefundHistory(transactionId: "4000000000000011")
            #expect(all.map(\.transactionId) == ids)
            #expect(api.standIn.requestCount(.serverAPI) == 3)
        }
    }

    @Test("Get All Subscription Statuses verifies each transaction and renewal info")
    func statuses() async throws {
        try await withServerAPI { api in
            let fixture = AppleStandIn.SubscriptionFixture(
                status: 1,
                originalTransactionId: "5000000000000001",
                signedTransactionInfo: try api.payloads.transaction("5000000000000009", original: "5000000000000001"),
                signedRenewalInfo: try api.payloads.renewal(original: "5000000000000001")
            )
            api.setData { $0.statuses["5000000000000001"] = [(group: "21000001", subscriptions: [fixture])] }
            let statuses = try await api.client.allSubscriptionStatuses(transactionId: "5000000000000001")
            #expect(statuses.bundleId == appBundleId)
            let last = try #require(statuses.groups.first?.lastTransactions.first)
            #expect(statuses.groups.first?.subscriptionGroupIdentifier == "21000001")
            #expect(last.status == .active)
            #expect(last.transaction?.transactionId == "5000000000000009")
            #expect(last.renewalInfo?.willAutoRenew == true)
            #expect(last.renewalInfo?.originalTransactionId == "5000000000000001")
        }
    }

    @Test("Look Up Order ID returns the order's verified transactions, or status 1")
    func lookUp() async throws {
        try await withServerAPI { api in
            let signed = [try api.payloads.transaction("6000000000000001", productId: "com.example.coins")]
            api.setData { $0.orders["MQ8ZX7YP2A"] = signed }
            let known = try await api.client.lookUpOrder(orderId: "MQ8ZX7YP2A")
            #expect(known.isValid)
            #expect(known.transactions.map(\.productId) == ["com.example.coins"])
            let unknown = try await api.client.lookUpOrder(orderId: "NOPE")
            #expect(!unknown.isValid)
            #expect(unknown.transactions.isEmpty)
        }
    }

    @Test("Get Notification History follows the pagination token to the end")
    func notificationPaging() async throws {
        try await withServerAPI { api in
            let uuids = (1...5).map { "00000000-0000-4000-8000-00000000000\($0)" }
            // Signed yesterday (the sandbox lists the last 30 days); one older than the window is not listed.
            let yesterday = Int64(Date().addingTimeInterval(-86_400).timeIntervalSince1970 * 1000)
            let signed = try uuids.map { try api.payloads.notification($0, transaction: api.payloads.transaction("70000000000000\(10 + uuids.firstIndex(of: $0)!)"), signedDate: yesterday) }
            let outside = try api.payloads.notification("00000000-0000-4000-8000-000000000099", signedDate: yesterday - 40 * 86_400_000)
            api.setData {
                $0.notifications = [outside] + signed
                $0.notificationPageSize = 2
            }
            let query = NotificationHistoryQuery(startDate: Date().addingTimeInterval(-20 * 86_400), endDate: Date(), notificationType: "DID_RENEW")
            let items = try await api.client.allNotificationHistory(query)
            #expect(items.map(\.notification.notificationUUID) == uuids)
            #expect(items.allSatisfy { $0.notification.transaction?.bundleId == appBundleId })
            #expect(items.first?.sendAttempts.first?.sendAttemptResult == "SUCCESS")
            let calls = api.standIn.serverAPICalls.filter { $0.route == "inApps/v1/notifications/history" }
            #expect(calls.map { $0.query["paginationToken"]?.first } == [nil, "p2", "p4"])
            let body = try #require(try JSONSerialization.jsonObject(with: Data(calls[0].body)) as? [String: Any])
            #expect(body["startDate"] as? Int64 == Int64(query.startDate.timeIntervalSince1970 * 1000))
            #expect(body["notificationType"] as? String == "DID_RENEW")
        }
    }

    @Test("Send Consumption Information puts Apple's request body; Apple's rules are checked before calling")
    func consumptionInformation() async throws {
        try await withServerAPI { api in
            let information = ConsumptionInformation(
                customerConsented: true, consumptionPercentage: 25_000, deliveryStatus: .delivered, sampleContentProvided: false,
                refundPreference: .grantProrated
            )
            try await api.client.sendConsumptionInformation(transactionId: "7100000000000001", information)
            let sent = try #require(api.standIn.consumptionRequests.first)
            #expect(sent.transactionId == "7100000000000001")
            let body = try #require(try JSONSerialization.jsonObject(with: Data(sent.body)) as? [String: Any])
            #expect(body["customerConsented"] as? Bool == true)
            #expect(body["consumptionPercentage"] as? Int == 25_000)
            #expect(body["deliveryStatus"] as? String == "DELIVERED")
            #expect(body["sampleContentProvided"] as? Bool == false)
            #expect(body["refundPreference"] as? String == "GRANT_PRORATED")
            #expect(body.count == 5)

            let calls = api.standIn.serverAPICalls.count
            for refused in [
                ConsumptionInformation(customerConsented: false, consumptionPercentage: nil, deliveryStatus: .delivered, sampleContentProvided: false),
                ConsumptionInformation(customerConsented: true, consumptionPercentage: 100_001, deliveryStatus: .delivered, sampleContentProvided: false),
                ConsumptionInformation(customerConsented: true, consumptionPercentage: 5_000, deliveryStatus: .undeliveredOther, sampleContentProvided: false),
                ConsumptionInformation(customerConsented: true, consumptionPercentage: nil, deliveryStatus: .delivered, sampleContentProvided: true, refundPreference: .grantProrated),
            ] {
                let error = await appStoreError { try await api.client.sendConsumptionInformation(transactionId: "7100000000000001", refused) }
                #expect(error?.code == .invalidRequest)
            }
            #expect(api.standIn.serverAPICalls.count == calls)  // refused before calling Apple
        }
    }

    @Test("a test notification is requested and its status read")
    func testNotification() async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.notification("11111111-2222-4333-8444-555555555555", type: "TEST")
            api.setData { $0.testNotification = signed }
            let token = try await api.client.requestTestNotification()
            let status = try await api.client.testNotificationStatus(token: token)
            #expect(status.notification.notificationType == "TEST")
            #expect(status.sendAttempts.count == 1)
        }
    }

    @Test("a signed payload from an untrusted authority is refused")
    func untrustedSigner() async throws {
        try await withServerAPI { api in
            let foreign = try SignedPayloads(minter: JWSMinter(authority: TestCertificateAuthority(keyKind: .p256, shape: .init(label: "Stranger"))))
            let signed = try foreign.transaction("8000000000000001")
            api.setData { $0.transactions["8000000000000001"] = signed }
            let error = await appStoreError { try await api.client.transactionInfo(transactionId: "8000000000000001") }
            #expect(error?.code == .signedPayloadRejected)
        }
    }

    @Test("a signed transaction for another app is refused")
    func otherApp() async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.transaction("8000000000000002", bundleId: "com.attacker.app")
            api.setData { $0.transactions["8000000000000002"] = signed }
            let error = await appStoreError { try await api.client.transactionInfo(transactionId: "8000000000000002") }
            #expect(error?.code == .signedPayloadRejected)
        }
    }

    /// A verifier that believes anything: the client's own bundle check still refuses.
    struct CredulousVerifier: SignedPayloadVerifying {
        let inner: SignedDataPayloadVerifier
        func verifyTransaction(_ compactJWS: String) async throws -> VerifiedTransaction { try await inner.verifyTransaction(compactJWS) }
        func verifyRenewalInfo(_ compactJWS: String) async throws -> VerifiedRenewalInfo { try await inner.verifyRenewalInfo(compactJWS) }
        func verifyNotification(_ compactJWS: String) async throws -> VerifiedNotification { try await inner.verifyNotification(compactJWS) }
    }

    @Test("the client refuses another app's transaction even when the verifier lets it through")
    func clientBundleCheck() async throws {
        let payloads = try SignedPayloads()
        let lenient = CredulousVerifier(inner: try payloads.verifier(expectedBundleId: "com.attacker.app"))
        try await withServerAPI(verifier: lenient) { api in
            let signed = try api.payloads.transaction("8000000000000003", bundleId: "com.attacker.app")
            api.setData { $0.transactions["8000000000000003"] = signed }
            let error = await appStoreError { try await api.client.transactionInfo(transactionId: "8000000000000003") }
            #expect(error?.code == .bundleIdMismatch)
        }
    }

    @Test("an answer for another transaction than the one asked is refused")
    func otherTransaction() async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.transaction("8000000000000009")
            api.setData { $0.transactions["8000000000000004"] = signed }
            let error = await appStoreError { try await api.client.transactionInfo(transactionId: "8000000000000004") }
            #expect(error?.code == .transactionNotFound)
        }
    }

    @Test("HTTP 429 waits until Retry-After (UNIX milliseconds) and then succeeds")
    func rateLimitedThenServed() async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.transaction("9000000000000001")
            api.setData { $0.transactions["9000000000000001"] = signed }
            let retryAt = Int64((Date().timeIntervalSince1970 + 0.4) * 1000)
            api.standIn.failNext(1, of: .serverAPI, with: .rateLimited(retryAfter: String(retryAt)))
            let started = ContinuousClock.now
            let transaction = try await api.client.transactionInfo(transactionId: "9000000000000001")
            let elapsed = ContinuousClock.now - started
            #expect(transaction.transactionId == "9000000000000001")
            #expect(elapsed >= .milliseconds(300))
            #expect(api.standIn.requestCount(.serverAPI) == 2)
        }
    }

    @Test("HTTP 429 with a Retry-After of seconds is honoured too")
    func rateLimitedSeconds() async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.transaction("9000000000000002")
            api.setData { $0.transactions["9000000000000002"] = signed }
            api.standIn.failNext(1, of: .serverAPI, with: .rateLimited(retryAfter: "1"))
            let started = ContinuousClock.now
            _ = try await api.client.transactionInfo(transactionId: "9000000000000002")
            #expect(ContinuousClock.now - started >= .milliseconds(900))
        }
    }

    @Test("HTTP 429 whose Retry-After is beyond what the policy waits fails at once with the time")
    func rateLimitedTooLong() async throws {
        try await withServerAPI { api in
            let retryAt = Int64((Date().timeIntervalSince1970 + 3600) * 1000)
            api.standIn.failAlways(.serverAPI, with: .rateLimited(retryAfter: String(retryAt)))
            let error = await appStoreError { try await api.client.transactionInfo(transactionId: "9000000000000003") }
            #expect(error?.code == .rateLimited)
            #expect(error?.apiError == .rateLimitExceeded)
            #expect(error?.httpStatus == 429)
            let retryAfter = try #require(error?.retryAfter)
            #expect(abs(retryAfter.timeIntervalSince1970 * 1000 - Double(retryAt)) < 1)
            #expect(api.standIn.requestCount(.serverAPI) == 1)
        }
    }

    @Test("only production and sandbox have a Server API")
    func environments() throws {
        let (credentials, _) = AppleStandIn.ServerAPIAccount.makeTestPair()
        #expect(throws: AppStoreClientError(.invalidConfiguration, reason: "")) {
            try AppStoreServerAPIClient(
                tokens: AppStoreServerAPITokenProvider(credentials: credentials),
                environment: .xcode,
                transport: UnusedTransport(),
                verifier: try SignedPayloads().verifier(),
                logger: quietLogger
            )
        }
        #expect(AppStoreServerAPIEndpoints.apple.baseURL(for: .production) == "https://api.storekit.apple.com")
        #expect(AppStoreServerAPIEndpoints.apple.baseURL(for: .sandbox) == "https://api.storekit-sandbox.apple.com")
        #expect(AppStoreServerAPIEndpoints.apple.baseURL(for: .xcode) == nil)
        #expect(VerifyReceiptEndpoints.apple.url(for: .production) == "https://buy.itunes.apple.com/verifyReceipt")
        #expect(VerifyReceiptEndpoints.apple.url(for: .sandbox) == "https://sandbox.itunes.apple.com/verifyReceipt")
    }
}

/// A transport that must never be used.
struct UnusedTransport: HTTPTransport {
    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(HTTPTransportError) -> TransportResponse {
        throw HTTPTransportError(.invalidRequest, reason: "unused")
    }
}

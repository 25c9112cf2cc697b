import Foundation
@testable import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateTestSupport
import Testing

/// Issue 33, item 1: Apple's current domains, the `User-Agent`, base URLs, and exactly which
/// answers are retried.
@Suite("Server API wire details: domains, User-Agent, which answers retry")
struct WireDetailsTests {
    @Test("the default domains are Apple's recommended ones; the older ones stay available")
    func domains() {
        #expect(AppStoreServerAPIEndpoints.apple.production == "https://api.storekit.apple.com")
        #expect(AppStoreServerAPIEndpoints.apple.sandbox == "https://api.storekit-sandbox.apple.com")
        #expect(AppStoreServerAPIEndpoints.appleLegacy.production == "https://api.storekit.itunes.apple.com")
        #expect(AppStoreServerAPIEndpoints.appleLegacy.sandbox == "https://api.storekit-sandbox.itunes.apple.com")
        let standIn = AppStoreServerAPIEndpoints(standIn: "http://127.0.0.1:8080/")
        #expect(standIn.production == "http://127.0.0.1:8080/production")
        #expect(standIn.sandbox == "http://127.0.0.1:8080/sandbox")
        let mixed = AppStoreServerAPIEndpoints.apple.replacing(.sandbox, with: "https://proxy.example.com/apple-sandbox/")
        #expect(mixed.production == "https://api.storekit.apple.com")
        #expect(mixed.sandbox == "https://proxy.example.com/apple-sandbox")
        #expect(AppStoreServerAPIEndpoints.apple.replacing(.xcode, with: "https://x.example.com") == .apple)
    }

    @Test("a base URL is https, or plain http to this machine only", arguments: [
        ("https://api.storekit.apple.com", true),
        ("https://proxy.example.com:8443/apple", true),
        ("http://127.0.0.1:9000", true),
        ("http://localhost:9000/x", true),
        ("http://[::1]:9000", true),
        ("http://api.example.com", false),
        ("http://localhost.example.com", false),
        ("http://127.0.0.1.example.com", false),
        ("ftp://api.example.com", false),
        ("https://", false),
        ("https://user:pw@api.example.com", false),
        ("https://api.example.com/?q=1", false),
        ("https://api.example.com/a b", false),
        ("api.storekit.apple.com", false),
    ])
    func baseURLRule(url: String, usable: Bool) {
        #expect((AppStoreServerAPIEndpoints.problem(withBaseURL: url) == nil) == usable)
    }

    @Test("the version is written once and the User-Agent names it")
    func userAgentText() {
        #expect(StoreGateVersion.userAgent == "StoreGate/" + StoreGateVersion.current)
        #expect(StoreGateVersion.current.split(separator: ".").count == 3)
    }

    @Test("every Server API request carries User-Agent: StoreGate/<version>")
    func serverAPIUserAgent() async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.transaction("2000000000000001")
            api.setData { $0.transactions["2000000000000001"] = signed }
            _ = try await api.client.transactionInfo(transactionId: "2000000000000001")
            _ = try await api.client.lookUpOrder(orderId: "NOPE")
            _ = await appStoreError { try await api.client.transactionInfo(transactionId: "404") }
            let calls = api.standIn.serverAPICalls
            #expect(calls.count == 3)
            #expect(calls.allSatisfy { $0.userAgent == StoreGateVersion.userAgent })
        }
    }

    @Test("every verifyReceipt request carries User-Agent: StoreGate/<version>")
    func verifyReceiptUserAgent() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.registerReceipt("VUE=", environment: .sandbox, reply: sampleReply(environment: .sandbox))
            _ = try await client.send(VerifyReceiptRequest(receiptData: "VUE="))
            let calls = standIn.verifyReceiptCalls
            #expect(calls.count == 2)  // production answers 21007, then the sandbox
            #expect(calls.allSatisfy { $0.userAgent == StoreGateVersion.userAgent })
        }
    }

    struct RetryCase: Sendable, CustomTestStringConvertible {
        let failure: AppleStandIn.Failure
        let retried: Bool
        let testDescription: String
    }

    /// The rule the docs state (docs/app-store-server-api.md, "Which answers are retried").
    static let retryTable: [RetryCase] = [
        RetryCase(failure: .httpStatus(500), retried: true, testDescription: "500 without a body"),
        RetryCase(failure: .httpStatus(502), retried: true, testDescription: "502 without a body"),
        RetryCase(failure: .httpStatus(503), retried: true, testDescription: "503 without a body"),
        RetryCase(failure: .apiError(.generalInternalRetryable, httpStatus: 500), retried: true, testDescription: "500 with 5000001"),
        RetryCase(failure: .apiError(AppStoreAPIErrorCode(rawValue: 5_000_099), httpStatus: 503), retried: true, testDescription: "503 with an undocumented code"),
        RetryCase(failure: .apiError(.accountNotFoundRetryable, httpStatus: 404), retried: true, testDescription: "404 with 4040002"),
        RetryCase(failure: .apiError(.appNotFoundRetryable, httpStatus: 404), retried: true, testDescription: "404 with 4040004"),
        RetryCase(failure: .apiError(.originalTransactionIdNotFoundRetryable, httpStatus: 404), retried: true, testDescription: "404 with 4040006"),
        RetryCase(failure: .rateLimited(retryAfter: "0"), retried: true, testDescription: "429 with Retry-After"),
        RetryCase(failure: .apiError(.generalInternal, httpStatus: 500), retried: false, testDescription: "500 with 5000000"),
        RetryCase(failure: .apiError(.generalInternal, httpStatus: 503), retried: false, testDescription: "503 with 5000000"),
        RetryCase(failure: .apiError(.invalidTransactionId, httpStatus: 400), retried: false, testDescription: "400 with 4000006"),
        RetryCase(failure: .apiError(.transactionIdNotFound, httpStatus: 404), retried: false, testDescription: "404 with 4040010"),
        RetryCase(failure: .apiError(AppStoreAPIErrorCode(rawValue: 4_000_999), httpStatus: 400), retried: false, testDescription: "400 with an undocumented code"),
        RetryCase(failure: .httpStatus(400), retried: false, testDescription: "400 without a body"),
        RetryCase(failure: .httpStatus(401), retried: false, testDescription: "401"),
        RetryCase(failure: .httpStatus(403), retried: false, testDescription: "403 without a body"),
        RetryCase(failure: .malformedBody, retried: false, testDescription: "200 that is not JSON"),
    ]

    @Test("exactly the documented answers are retried", arguments: retryTable)
    func retryRule(_ test: RetryCase) async throws {
        try await withServerAPI { api in
            let signed = try api.payloads.transaction("2000000000000001")
            api.setData { $0.transactions["2000000000000001"] = signed }
            api.standIn.failNext(1, of: .serverAPI, with: test.failure)
            if test.retried {
                let transaction = try await api.client.transactionInfo(transactionId: "2000000000000001")
                #expect(transaction.transactionId == "2000000000000001")
                #expect(api.standIn.requestCount(.serverAPI) == 2)
            } else {
                let error = await appStoreError { try await api.client.transactionInfo(transactionId: "2000000000000001") }
                #expect(error?.isRetryable == false)
                #expect(error?.attempts == 1)
                #expect(api.standIn.requestCount(.serverAPI) == 1)
            }
        }
    }

    @Test("a 503 with Retry-After waits for it, as 429 does")
    func serviceUnavailableRetryAfter() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let response = TransportResponse(status: 503, headers: [.init("Retry-After", "2")], body: [])
        let error = try #require(throws: AppStoreClientError.self) {
            try HTTPStatusPolicy.requireSuccess(response, environment: .sandbox, now: now)
        }
        #expect(error.code == .httpStatus)
        #expect(error.isRetryable)
        let wait = try #require(error.retryAfter).timeIntervalSince(now)
        #expect(abs(wait - 2) < 0.001)
    }
}

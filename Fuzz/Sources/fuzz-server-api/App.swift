import Crypto
import Foundation
import FuzzSupport
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateSignedData

/// The App Store Server API client's reading of Apple's answers (`ServerAPI/Models`): each
/// single-page endpoint (transaction info, history, subscription statuses, order lookup,
/// refund history, notification history, test notifications) is called over a transport that
/// answers the input as a `200 OK` body, so the response model is decoded and every signed
/// payload in it verified with the test CA's root as an opt-in anchor; then once more with
/// the input as the body of a `400`, read as Apple's error body. Seeds: an answer of each
/// shape carrying minted JWS.
@main
enum App {
    static func main() {
        let bundleId = "com.example.storegate"
        let credentials = AppStoreServerAPICredentials(
            keyId: "FUZZKEY001", issuerId: "00000000-0000-0000-0000-000000000000", bundleId: bundleId,
            privateKey: P256.Signing.PrivateKey())
        let tokens = AppStoreServerAPITokenProvider(credentials: credentials)
        let verifier = SignedDataPayloadVerifier(SignedDataVerifier(
            expectations: SignedDataExpectations(bundleId: bundleId, environments: [.production, .sandbox, .xcode, .localTesting, .test]),
            chainVerifier: CertificateChainVerifier(trustStore: FuzzFiles.testTrustStore()),
            clock: { Date(timeIntervalSince1970: 1_700_000_000) }))
        func client(status: Int, body: [UInt8]) -> AppStoreServerAPIClient? {
            do throws(AppStoreClientError) {
                return try AppStoreServerAPIClient(
                    tokens: tokens, environment: .sandbox,
                    transport: AnsweringTransport(status: status, body: body),
                    verifier: verifier, retryPolicy: .none,
                    logger: Logger(label: "fuzz", factory: { _ in SwiftLogNoOpLogHandler() }),
                    now: { Date(timeIntervalSince1970: 1_700_000_000) })
            } catch {
                FuzzTarget.fail("the client cannot be made: \(error)")
            }
        }
        FuzzTarget.run { bytes in
            guard let ok = client(status: 200, body: bytes), let refused = client(status: 400, body: bytes) else { return }
            _ = runBlocking { () async -> Int in
                var answered = 0
                func attempt<T>(_ call: () async throws(AppStoreClientError) -> T) async {
                    do throws(AppStoreClientError) {
                        _ = try await call()
                        answered += 1
                    } catch {}
                }
                await attempt { () async throws(AppStoreClientError) in try await ok.transactionInfo(transactionId: "2000000100000001") }
                await attempt { () async throws(AppStoreClientError) in try await ok.transactionHistory(transactionId: "2000000100000001") }
                await attempt { () async throws(AppStoreClientError) in try await ok.allSubscriptionStatuses(transactionId: "2000000100000001") }
                await attempt { () async throws(AppStoreClientError) in try await ok.lookUpOrder(orderId: "MK5TTTVWJH") }
                await attempt { () async throws(AppStoreClientError) in try await ok.refundHistory(transactionId: "2000000100000001") }
                await attempt { () async throws(AppStoreClientError) in
                    try await ok.notificationHistory(NotificationHistoryQuery(
                        startDate: Date(timeIntervalSince1970: 1_690_000_000), endDate: Date(timeIntervalSince1970: 1_700_000_000)))
                }
                await attempt { () async throws(AppStoreClientError) in try await ok.requestTestNotification() }
                await attempt { () async throws(AppStoreClientError) in try await ok.testNotificationStatus(token: "fuzz-token") }
                await attempt { () async throws(AppStoreClientError) in try await refused.transactionInfo(transactionId: "2000000100000001") }
                return answered
            }
        }
    }
}

/// A transport whose every answer has the given status and the fuzz input as body.
struct AnsweringTransport: HTTPTransport {
    let status: Int
    let body: [UInt8]

    func send(_ request: TransportRequest, deadline: ContinuousClock.Instant) async throws(AppStoreClientError) -> TransportResponse {
        TransportResponse(status: status, headers: [.init("Content-Type", "application/json")], body: body)
    }
}

import Foundation
import FuzzSupport
import ServerAPIFuzzing
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
        let clients = ServerAPIFuzzClients()
        FuzzTarget.run { bytes in
            let ok = clients.client(status: 200, body: bytes)
            let refused = clients.client(status: 400, body: bytes)
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

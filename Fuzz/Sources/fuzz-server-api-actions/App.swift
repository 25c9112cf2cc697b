import Foundation
import FuzzSupport
import ServerAPIFuzzing
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateSignedData

/// The App Store Server API endpoints issue 33 added, reading Apple's answers: Get App
/// Transaction Info (a signed app transaction, verified with the test CA's root as an opt-in
/// anchor), Extend a Subscription Renewal Date, Extend Renewal Dates for All Active
/// Subscribers and Get Status of Subscription Renewal Date Extensions, each called over a
/// transport that answers the input as a `200 OK` body; then Set App Account Token and Finish
/// Transaction with the input as the body of a `400` and of a `503`, read as Apple's error body
/// (and the retry decision made on it). Claims checked on every answer the client accepts:
/// - an extension answer is for the subscription asked, and a mass status for the request asked;
/// - an app transaction is for the client's app;
/// - an error carries Apple's code only when the body held one, and is retryable exactly
///   when the rule says (a documented code decides; otherwise a 5xx is retried).
/// Seeds: an answer of each shape, an app transaction minted by the test CA, error bodies.
@main
enum App {
    static let bundleId = ServerAPIFuzzClients.bundleId

    static func main() {
        let clients = ServerAPIFuzzClients()
        let one = ExtendRenewalDateRequest(extendByDays: 7, extendReasonCode: .serviceIssueOrOutage, requestIdentifier: "fuzz-request-1")
        let mass = MassExtendRenewalDateRequest(
            extendByDays: 7, extendReasonCode: .serviceIssueOrOutage, requestIdentifier: "fuzz-mass-1", productId: "com.example.monthly",
            storefrontCountryCodes: ["USA"])
        FuzzTarget.run { bytes in
            let ok = clients.client(status: 200, body: bytes)
            let refused = clients.client(status: 400, body: bytes)
            let unavailable = clients.client(status: 503, body: bytes)
            let documented = AppStoreAPIErrorCodeProbe.code(in: bytes)
            _ = runBlocking { () async -> Int in
                var answered = 0
                do throws(AppStoreClientError) {
                    let info = try await ok.appTransactionInfo(transactionId: "2000000100000001")
                    FuzzTarget.require(info.bundleId == bundleId, "an app transaction for \(info.bundleId) was accepted")
                    answered += 1
                } catch {}
                do throws(AppStoreClientError) {
                    let answer = try await ok.extendSubscriptionRenewalDate(originalTransactionId: "2000000100000001", one)
                    FuzzTarget.require(
                        answer.originalTransactionId == nil || answer.originalTransactionId == "2000000100000001",
                        "an extension answer for another subscription was accepted")
                    answered += 1
                } catch {}
                do throws(AppStoreClientError) {
                    FuzzTarget.require(try await ok.extendRenewalDateForAllActiveSubscribers(mass) == "fuzz-mass-1", "another request identifier was acknowledged")
                    answered += 1
                } catch {}
                do throws(AppStoreClientError) {
                    let status = try await ok.renewalDateExtensionStatus(requestIdentifier: "fuzz-mass-1", productId: "com.example.monthly")
                    FuzzTarget.require(status.requestIdentifier == "fuzz-mass-1", "a status for another request was accepted")
                    answered += 1
                } catch {}
                for (api, status) in [(refused, 400), (unavailable, 503)] {
                    do throws(AppStoreClientError) {
                        try await api.setAppAccountToken(originalTransactionId: "2000000100000001", appAccountToken: UUID(uuid: (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)))
                        FuzzTarget.fail("HTTP \(status) was taken as success")
                    } catch {
                        check(error, status: status, documented: documented)
                    }
                    do throws(AppStoreClientError) {
                        try await api.finishTransaction(transactionId: "2000000100000001")
                        FuzzTarget.fail("HTTP \(status) was taken as success")
                    } catch {
                        check(error, status: status, documented: documented)
                    }
                }
                return answered
            }
        }
    }

    /// The rule of ``AppStoreClientError/isRetryable`` for an HTTP error answer.
    static func check(_ error: AppStoreClientError, status: Int, documented: AppStoreAPIErrorCode?) {
        FuzzTarget.require(error.httpStatus == status, "HTTP \(status) was reported as \(String(describing: error.httpStatus))")
        FuzzTarget.require(error.apiError == documented, "the error code \(String(describing: error.apiError)) is not the body's \(String(describing: documented))")
        let expected: Bool
        if let documented, documented.isDocumented {
            expected = documented.isRetryable
        } else {
            expected = status >= 500
        }
        FuzzTarget.require(error.isRetryable == expected, "HTTP \(status) with \(String(describing: documented)): retryable \(error.isRetryable)")
    }
}

/// Apple's `errorCode`, read the way the client reads it (an object whose `errorCode` is an
/// integer, a body of at most 64 KB), to check the client against.
enum AppStoreAPIErrorCodeProbe {
    private struct Body: Decodable {
        let errorCode: Int
    }

    static func code(in body: [UInt8]) -> AppStoreAPIErrorCode? {
        guard !body.isEmpty, body.count <= 64 << 10 else { return nil }
        do {
            return AppStoreAPIErrorCode(rawValue: try JSONDecoder().decode(Body.self, from: Data(body)).errorCode)
        } catch {
            return nil
        }
    }
}

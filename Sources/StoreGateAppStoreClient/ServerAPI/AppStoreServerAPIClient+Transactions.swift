public import Foundation
import StoreGateCore
import StoreGateHTTP
import StoreGateSignedData

extension AppStoreServerAPIClient {
    /// Get App Transaction Info: `GET /inApps/v1/transactions/appTransactions/{transactionId}`,
    /// the customer's app transaction (proof they got the app), verified.
    ///
    /// - Parameter transactionId: Any `transactionId`, `originalTransactionId` or
    ///   `appTransactionId` of the customer.
    /// - Throws: ``AppStoreClientError/Code/apiError`` with 4040019
    ///   (``AppStoreAPIErrorCode/appTransactionDoesNotExist``) when the customer has none;
    ///   ``AppStoreClientError/Code/signedPayloadRejected`` when the payload fails verification;
    ///   ``AppStoreClientError/Code/bundleIdMismatch`` or
    ///   ``AppStoreClientError/Code/environmentMismatch`` when it is another app's or
    ///   environment's; anything a call throws.
    public func appTransactionInfo(transactionId: String) async throws(AppStoreClientError) -> AppTransactionInfo {
        let path = "/inApps/v1/transactions/appTransactions/" + (try Self.pathSegment(transactionId, name: "transaction id"))
        let wire = try await call(ServerAPIWire.AppTransactionInfoResponse.self, method: "GET", path: path)
        guard let signed = wire.signedAppTransactionInfo else {
            throw AppStoreClientError(.malformedReply, reason: "the answer has no signedAppTransactionInfo", environment: environment)
        }
        let verified: VerifiedSignedAppTransaction
        do {
            verified = try await verifier.verifyAppTransaction(signed)
        } catch {
            throw AppStoreClientError(.signedPayloadRejected, reason: "signedAppTransactionInfo: \(error)", environment: environment)
        }
        guard verified.bundleId == bundleId else {
            throw AppStoreClientError(.bundleIdMismatch, reason: "the app transaction is for \(verified.bundleId), not \(bundleId)", environment: environment)
        }
        // An Apple-anchored app transaction from this environment's endpoint is this
        // environment's (one an opt-in anchor signed reports Test or Xcode).
        guard verified.environment == environment || !AppStoreEnvironment.defaultAccepted.contains(verified.environment) else {
            throw AppStoreClientError(
                .environmentMismatch, reason: "the app transaction is from \(verified.environment), not \(environment)", environment: environment
            )
        }
        return AppTransactionInfo(appTransaction: verified.payload, environment: verified.environment, bundleId: verified.bundleId)
    }

    /// Set App Account Token: `PUT /inApps/v1/transactions/{originalTransactionId}/appAccountToken`,
    /// which sets (or replaces) the `appAccountToken` of a purchase, such as one the customer
    /// made outside the app (an offer code redeemed in the App Store).
    ///
    /// Apple answers 200 with no body; later signed transactions and renewal infos of the
    /// purchase carry the token.
    ///
    /// - Parameters:
    ///   - originalTransactionId: The purchase's original transaction id (Apple answers
    ///     4000187 ``AppStoreAPIErrorCode/transactionIdIsNotOriginalTransactionId`` to another id).
    ///   - appAccountToken: The UUID that names the customer's account (sent lower case).
    /// - Throws: ``AppStoreClientError/Code/apiError`` with Apple's code (4000183, 4000185,
    ///   4000187, 4040010, …); anything a call throws.
    public func setAppAccountToken(originalTransactionId: String, appAccountToken: UUID) async throws(AppStoreClientError) {
        let path = "/inApps/v1/transactions/" + (try Self.pathSegment(originalTransactionId, name: "original transaction id")) + "/appAccountToken"
        let body = try Self.encode(ServerAPIWire.UpdateAppAccountTokenRequest(appAccountToken: appAccountToken.uuidString.lowercased()), what: "the app account token")
        _ = try await send(method: "PUT", path: path, body: body, accepting: [200, 202, 204])
    }

    /// Finish Transaction (API 1.20): `POST /inApps/v1/transactions/{transactionId}/finish`,
    /// telling Apple the server has delivered what the transaction bought, as
    /// `Transaction.finish()` does in the app.
    ///
    /// Finishing a transaction twice is harmless (Apple answers success again); the call is
    /// retried under the retry policy like every other.
    ///
    /// - Throws: ``AppStoreClientError/Code/apiError`` with Apple's code (4000006, 4040010, …);
    ///   anything a call throws.
    public func finishTransaction(transactionId: String) async throws(AppStoreClientError) {
        let path = "/inApps/v1/transactions/" + (try Self.pathSegment(transactionId, name: "transaction id")) + "/finish"
        _ = try await send(method: "POST", path: path, accepting: [200, 202, 204])
    }

    /// A request body as JSON.
    static func encode(_ value: some Encodable, what: String) throws(AppStoreClientError) -> [UInt8] {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return Array(try encoder.encode(value))
        } catch {
            throw AppStoreClientError(.invalidRequest, reason: "\(what) cannot be encoded")
        }
    }
}

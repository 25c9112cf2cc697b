import Foundation
import Hummingbird
import StoreGateCore
import StoreGateLedger
import StoreGateSignedData
import StoreGateSync
import Logging

/// The body Apple posts to the notifications URL: `{"signedPayload": "…"}`.
///
/// Members other than `signedPayload` are ignored, not refused: Apple may add some, and a
/// refusal would make it retry the same notification for days.
struct NotificationRequest: JSONRequestBody {
    let signedPayload: String

    init(_ object: RequestObject) throws(APIError) {
        signedPayload = try object.string("signedPayload")
    }
}

/// The reply of `POST /v1/notifications/apple` (`NotificationReply`).
struct NotificationReply: JSONWritable {
    let status = "stored"
    let notificationUUID: String
    let notificationType: String
    let subtype: String?
    let environment: String
    /// The notification had been stored before; nothing changed.
    let isDuplicate: Bool
    let transactionId: String?

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("status", status)
            json.member("notificationUUID", notificationUUID)
            json.member("notificationType", notificationType)
            json.member("subtype", subtype)
            json.member("environment", environment)
            json.member("isDuplicate", isDuplicate)
            json.member("transactionId", transactionId)
        }
    }
}

extension Endpoints {
    /// Takes an App Store Server Notification V2. It is authenticated by its signature (no API
    /// key): a payload whose signature or certificate chain fails answers 401, one that fails
    /// the expectations (another app, an environment not accepted) 422. The reply is 200 only
    /// once the ledger committed the change, so Apple retries anything not stored; a
    /// notification delivered again is answered 200 with `isDuplicate` and changes nothing.
    @Sendable func receiveNotification(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let input = try await decode(NotificationRequest.self, request)
        let (notification, outcome) = try await measured(ProofKind.notification.rawValue) { () throws(APIError) in
            let verified: VerifiedSignedNotification
            do throws(APIError) {
                verified = try await verification.verifyNotification(input.signedPayload)
            } catch {
                throw Self.notificationError(error)
            }
            let notification = verified.notification
            do throws(LedgerError) {
                let outcome = try await ledger.apply(notification)
                // Queued in the ledger before the 200, so Apple delivers again what was not kept.
                try await appStore?.consumption?.enqueue(notification)
                return (notification, outcome)
            } catch {
                throw APIError.ledger(error, logger: context.logger)
            }
        }
        context.logger.debug("notification stored", metadata: [
            "notification.uuid": "\(notification.notificationUUID)",
            "notification.type": "\(notification.notificationType)",
            "duplicate": "\(outcome.isDuplicate)",
        ])
        return JSONReply.response(NotificationReply(
            notificationUUID: notification.notificationUUID,
            notificationType: notification.notificationType,
            subtype: notification.subtype,
            environment: notification.environment.rawValue,
            isDuplicate: outcome.isDuplicate,
            transactionId: outcome.transactionId
        ))
    }

    /// Signature and chain failures mean the notification is not authentic: 401.
    static func notificationError(_ error: APIError) -> APIError {
        guard error.step == VerificationStep.signature.rawValue || error.step == VerificationStep.chain.rawValue else {
            return error
        }
        var mapped = APIError(.unauthorized, error.code, error.message, field: error.field, step: error.step)
        mapped.isRetryable = false
        return mapped
    }
}

extension Endpoints {
    /// App Store Server Notifications V2 (authenticated by their signature).
    var notificationRoutes: [Route] {
        [Route(.post, "/v1/notifications/apple", .open, receiveNotification)]
    }
}

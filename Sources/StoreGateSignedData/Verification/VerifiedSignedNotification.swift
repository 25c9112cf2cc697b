import Foundation
import StoreGateCore

/// An App Store Server Notification V2 whose chain, signature and expectations
/// ``SignedDataVerifier`` checked, together with its nested signed data, each verified on its
/// own and found to agree with the notification's bundle id and environment.
public struct VerifiedSignedNotification: Sendable {
    /// The decoded payload.
    public let payload: ResponseBodyV2DecodedPayload
    /// How it was verified.
    public let details: SignedDataDetails
    /// The verified `data.signedTransactionInfo`, when present.
    public let transaction: VerifiedSignedTransaction?
    /// The verified `data.signedRenewalInfo`, when present.
    public let renewalInfo: VerifiedSignedRenewalInfo?
    /// The verified `appData.signedAppTransactionInfo`, when present.
    public let appTransaction: VerifiedSignedAppTransaction?
    /// The `signedPayload` exactly as received, for encrypted storage; never log it.
    public let rawJWS: [UInt8]

    /// The environment StoreGate reports for it.
    public var environment: Environment { details.environment }

    /// The notification in the ledger's shape.
    ///
    /// - Throws: ``SignedDataError/Code/missingField`` (payload step) when the notification
    ///   lacks `notificationUUID`, `notificationType` or a bundle id, or its nested data lack
    ///   what ``VerifiedSignedTransaction/transaction()`` and
    ///   ``VerifiedSignedRenewalInfo/renewalInfo()`` need.
    public func notification() throws(SignedDataError) -> VerifiedNotification {
        guard let uuid = payload.notificationUUID else {
            throw SignedDataError(.missingField, field: "notificationUUID", reason: "the notification has no notificationUUID")
        }
        guard let type = payload.notificationType else {
            throw SignedDataError(.missingField, field: "notificationType", reason: "the notification has no notificationType")
        }
        guard let bundleId = payload.subject.bundleId else {
            throw SignedDataError(.missingField, field: "data.bundleId", reason: "the notification names no bundleId")
        }
        var verifiedTransaction: VerifiedTransaction?
        if let transaction {
            verifiedTransaction = try VerifiedSignedTransaction.ledgerTransaction(
                transaction.payload, environment: transaction.details.environment, path: "data.signedTransactionInfo.")
        }
        var verifiedRenewalInfo: VerifiedRenewalInfo?
        if let renewalInfo {
            verifiedRenewalInfo = try VerifiedSignedRenewalInfo.ledgerRenewalInfo(
                renewalInfo.payload, environment: renewalInfo.details.environment, path: "data.signedRenewalInfo.")
        }
        return VerifiedNotification(
            notificationUUID: uuid,
            notificationType: type.rawValue,
            subtype: payload.subtype?.rawValue,
            signedDate: details.signingTime,
            environment: details.environment,
            bundleId: bundleId,
            transaction: verifiedTransaction,
            renewalInfo: verifiedRenewalInfo,
            rawProof: rawJWS
        )
    }
}

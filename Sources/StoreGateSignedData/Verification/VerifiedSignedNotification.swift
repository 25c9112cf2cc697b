import Foundation
public import StoreGateCore

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
    /// The notification in the ledger's shape (`notificationUUID`, `notificationType` and the
    /// bundle id were checked present in the payload step).
    public let notification: VerifiedNotification
    /// The `signedPayload` exactly as received, for encrypted storage; never log it.
    public let rawJWS: [UInt8]

    /// The environment StoreGate reports for it.
    public var environment: AppStoreEnvironment { details.environment }

    init(
        payload: ResponseBodyV2DecodedPayload,
        details: SignedDataDetails,
        fields: Fields,
        transaction: VerifiedSignedTransaction?,
        renewalInfo: VerifiedSignedRenewalInfo?,
        appTransaction: VerifiedSignedAppTransaction?,
        rawJWS: [UInt8]
    ) {
        self.payload = payload
        self.details = details
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.appTransaction = appTransaction
        self.rawJWS = rawJWS
        self.notification = VerifiedNotification(
            notificationUUID: fields.notificationUUID,
            notificationType: fields.notificationType,
            subtype: payload.subtype?.rawValue,
            signedDate: details.signingTime,
            environment: details.environment,
            bundleId: fields.bundleId,
            transaction: transaction?.transaction,
            renewalInfo: renewalInfo?.renewalInfo,
            rawProof: rawJWS
        )
    }

    /// The members the ledger needs, checked in the payload step.
    struct Fields: Sendable {
        let notificationUUID: String
        let notificationType: String
        let bundleId: String

        /// - Throws: ``SignedDataError/Code/missingField`` (payload step).
        init(_ payload: ResponseBodyV2DecodedPayload, subjectField: String) throws(SignedDataError) {
            guard let uuid = payload.notificationUUID else {
                throw SignedDataError(.missingField, field: "notificationUUID", reason: "the notification has no notificationUUID")
            }
            guard let type = payload.notificationType else {
                throw SignedDataError(.missingField, field: "notificationType", reason: "the notification has no notificationType")
            }
            guard let bundleId = payload.subject.bundleId else {
                throw SignedDataError(.missingField, field: subjectField + "bundleId", reason: "the notification names no bundleId")
            }
            notificationUUID = uuid
            notificationType = type.rawValue
            self.bundleId = bundleId
        }
    }
}

public import Foundation
public import StoreGateCore

/// A notification the ledger took, as evidence of what it decided.
public struct RecordedNotification: Sendable, Hashable, Codable {
    /// Apple's `notificationUUID`: how duplicates are recognized.
    public var notificationUUID: String
    /// Apple's `notificationType`.
    public var notificationType: String
    /// Apple's `subtype`.
    public var subtype: String?
    /// When Apple signed it: the order in which notifications apply.
    public var signedDate: Date
    /// The environment the transaction was verified in.
    public var environment: AppStoreEnvironment
    /// The transaction it carried, if any.
    public var transactionId: String?
    /// The family it concerns, if any.
    public var originalTransactionId: String?

    package init(
        notificationUUID: String,
        notificationType: String,
        subtype: String?,
        signedDate: Date,
        environment: AppStoreEnvironment,
        transactionId: String?,
        originalTransactionId: String?
    ) {
        self.notificationUUID = notificationUUID
        self.notificationType = notificationType
        self.subtype = subtype
        self.signedDate = signedDate
        self.environment = environment
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
    }
}

public import Foundation
import StoreGateCore

/// What recording a proof changed.
public struct RecordOutcome: Sendable, Hashable, Codable {
    /// The account concerned.
    public var account: AccountID
    /// Transactions the ledger had never seen.
    public var newTransactionIds: [String]
    /// Known transactions whose state this proof changed (a refund, an upgrade, an owner
    /// for a purchase only a notification had mentioned).
    public var updatedTransactionIds: [String]
    /// Known transactions this proof did not change (idempotent re-recording).
    public var unchangedTransactionIds: [String]
    /// The original transaction ids of the families this proof moved to the account from
    /// another one (``TransferPolicy/transfer``), sorted; their transactions the proof carried
    /// are among ``updatedTransactionIds``.
    public var transferredOriginalTransactionIds: [String]

    /// Whether nothing changed: the proof had been recorded before.
    public var isDuplicate: Bool { newTransactionIds.isEmpty && updatedTransactionIds.isEmpty && transferredOriginalTransactionIds.isEmpty }

    package init(
        account: AccountID,
        newTransactionIds: [String],
        updatedTransactionIds: [String],
        unchangedTransactionIds: [String],
        transferredOriginalTransactionIds: [String] = []
    ) {
        self.account = account
        self.newTransactionIds = newTransactionIds
        self.updatedTransactionIds = updatedTransactionIds
        self.unchangedTransactionIds = unchangedTransactionIds
        self.transferredOriginalTransactionIds = transferredOriginalTransactionIds
    }
}

/// What taking a notification changed.
public struct NotificationOutcome: Sendable, Hashable, Codable {
    /// Apple's `notificationUUID`.
    public var notificationUUID: String
    /// The notification had been taken before; nothing changed.
    public var isDuplicate: Bool
    /// The account owning the purchase, when one does.
    public var account: AccountID?
    /// The transaction it carried, when it carried one.
    public var transactionId: String?

    package init(
        notificationUUID: String,
        isDuplicate: Bool,
        account: AccountID?,
        transactionId: String?
    ) {
        self.notificationUUID = notificationUUID
        self.isDuplicate = isDuplicate
        self.account = account
        self.transactionId = transactionId
    }
}

/// The result of a successful ``Ledger/consume(_:quantity:idempotencyKey:for:at:)``.
public struct ConsumptionReceipt: Sendable, Hashable, Codable {
    /// The account concerned.
    public var account: AccountID
    /// The consumable.
    public var productId: String
    /// Units consumed.
    public var quantity: Int
    /// The caller's idempotency key.
    public var idempotencyKey: String
    /// When it was consumed (the first time, for a replay).
    public var consumedAt: Date
    /// The available balance right after this consumption.
    public var remaining: Int
    /// Whether this call replayed an earlier consumption with the same key (nothing consumed now).
    public var isReplay: Bool

    package init(
        account: AccountID,
        productId: String,
        quantity: Int,
        idempotencyKey: String,
        consumedAt: Date,
        remaining: Int,
        isReplay: Bool
    ) {
        self.account = account
        self.productId = productId
        self.quantity = quantity
        self.idempotencyKey = idempotencyKey
        self.consumedAt = consumedAt
        self.remaining = remaining
        self.isReplay = isReplay
    }
}

/// The result of ``Ledger/checkIntegrity()``.
public struct LedgerIntegrityReport: Sendable, Hashable, Codable {
    /// The backend checked (`memory`, `sqlite`, `postgres`).
    public var backend: String
    /// What was wrong; empty when the store is healthy.
    public var problems: [String]

    /// Whether no problem was found.
    public var isHealthy: Bool { problems.isEmpty }

    package init(
        backend: String,
        problems: [String]
    ) {
        self.backend = backend
        self.problems = problems
    }
}

public import Foundation
public import StoreGateCore

/// Something support did at Apple for an account's purchase — today a renewal date extension
/// — kept in the account's events (`subscription.extended`) with who did it and why.
public struct SupportAction: Sendable, Hashable {
    /// The account whose purchase it was.
    public var account: AccountID
    /// The purchase's product.
    public var productId: String
    /// Where the purchase lives.
    public var environment: AppStoreEnvironment
    /// The purchase family (Apple's original transaction id).
    public var originalTransactionId: String
    /// What was done, by whom, why.
    public var support: LedgerEvent.Support
    /// When Apple answered.
    public var occurredAt: Date

    /// Creates an action from its parts.
    public init(
        account: AccountID, productId: String, environment: AppStoreEnvironment, originalTransactionId: String, support: LedgerEvent.Support,
        occurredAt: Date
    ) {
        self.account = account
        self.productId = productId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.support = support
        self.occurredAt = occurredAt
    }

    /// Refuses what the ledger would not keep: an empty action or reason, texts over 512 bytes.
    package func check() throws(LedgerError) {
        for (name, text) in [("action", support.action), ("reason", support.reason), ("actor", support.actor ?? "-"), ("requestIdentifier", support.requestIdentifier ?? "-")] {
            guard !text.isEmpty, text.utf8.count <= 512 else {
                throw LedgerError(.invalidArgument, reason: "the support action's \(name) must be 1...512 bytes")
            }
        }
        guard !productId.isEmpty, !originalTransactionId.isEmpty else {
            throw LedgerError(.invalidArgument, reason: "a support action names its product and purchase")
        }
    }

    /// Its event.
    package func event(recordedAt: Date) -> LedgerEvent {
        LedgerEvent(
            id: EventPlanner.newID(), sequence: 0, type: .subscriptionExtended, account: account, productId: productId, environment: environment,
            transactionId: nil, originalTransactionId: originalTransactionId, occurredAt: occurredAt.ledgerNormalized,
            recordedAt: recordedAt.ledgerNormalized, source: LedgerEvent.supportSource, entitlement: nil, support: support
        )
    }
}

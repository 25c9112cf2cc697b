public import Foundation
public import StoreGateCore

/// What support asks for when it moves a purchase family to an account by hand
/// (``Ledger/transfer(_:)``).
///
/// The family (every transaction sharing ``originalTransactionId`` in ``environment``) moves
/// from whichever account owns it to ``account``, with its renewals and consumable units, and a
/// `purchase.transferred` event on both accounts naming ``transferredBy`` and ``reason``. It
/// works under either ``TransferPolicy``; a family bound to an `appAccountToken` that is not
/// ``account``'s token never moves.
public struct TransferRequest: Sendable, Hashable {
    /// The family's environment.
    public var environment: AppStoreEnvironment
    /// The family's original transaction id.
    public var originalTransactionId: String
    /// The account the family moves to.
    public var account: AccountID
    /// Why (1...512 bytes without control characters; audited, never a secret).
    public var reason: String
    /// Who moves it: the API key's name (1...128 bytes).
    public var transferredBy: String
    /// When (the injected clock's now): the events' `occurredAt`.
    public var date: Date

    /// Creates a request.
    public init(
        environment: AppStoreEnvironment, originalTransactionId: String, account: AccountID, reason: String, transferredBy: String, date: Date
    ) {
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.account = account
        self.reason = reason
        self.transferredBy = transferredBy
        self.date = date
    }
}

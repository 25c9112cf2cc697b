public import StoreGateCore

/// What a manual move (``Ledger/transfer(_:)``) did.
public struct TransferOutcome: Sendable, Hashable, Codable {
    /// The family's environment.
    public var environment: AppStoreEnvironment
    /// The family's original transaction id.
    public var originalTransactionId: String
    /// The account that owned the family before (the same as ``to`` when it did not move).
    public var from: AccountID
    /// The account that owns it now.
    public var to: AccountID
    /// Whether it moved; `false` when ``to`` owned it already (a retry): nothing was written.
    public var isMoved: Bool
    /// The move's id, as its events carry it (`nil` when nothing moved).
    public var transferId: String?
    /// The family's transactions, sorted.
    public var transactionIds: [String]

    /// Creates a value.
    public init(
        environment: AppStoreEnvironment, originalTransactionId: String, from: AccountID, to: AccountID, isMoved: Bool,
        transferId: String?, transactionIds: [String]
    ) {
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.from = from
        self.to = to
        self.isMoved = isMoved
        self.transferId = transferId
        self.transactionIds = transactionIds
    }
}

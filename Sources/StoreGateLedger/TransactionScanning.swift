import Foundation
public import StoreGateCore

/// Reading every recorded transaction in pages, and filling in the money facts of
/// transactions recorded before they were known: what analytics and the money-facts backfill
/// need from a ledger. Every backend has it (``Ledger`` refines it).
public protocol TransactionScanning: Sendable {
    /// Up to `limit` recorded transactions after `cursor` (from the first when `nil`), in the
    /// backend's key order; pass the last one's cursor (``TransactionCursor/init(_:)``) for the
    /// next page. A page shorter than `limit` is the last.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` for a limit outside 1...10000, or a
    ///   storage error.
    func transactions(after cursor: TransactionCursor?, limit: Int) async throws(LedgerError) -> [RecordedTransaction]

    /// Sets the money facts of a transaction whose money facts are unknown (recorded from an
    /// app receipt, or before schema 14); a transaction that has them keeps them.
    ///
    /// - Returns: Whether the transaction was changed (`false`: unknown transaction, or its
    ///   facts were known).
    /// - Throws: ``LedgerError/Code/invalidArgument`` for facts that fail the ledger's checks,
    ///   or a storage error.
    @discardableResult
    func fillMoneyFacts(_ money: MoneyFacts, of transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> Bool
}

/// Where a page of ``TransactionScanning/transactions(after:limit:)`` ended.
public struct TransactionCursor: Sendable, Hashable {
    /// The environment of the last transaction read.
    public var environment: AppStoreEnvironment
    /// The transaction id of the last transaction read.
    public var transactionId: String

    /// The cursor after `transaction`.
    public init(_ transaction: RecordedTransaction) {
        self.environment = transaction.environment
        self.transactionId = transaction.transactionId
    }

    /// The cursor after the transaction with this key.
    public init(environment: AppStoreEnvironment, transactionId: String) {
        self.environment = environment
        self.transactionId = transactionId
    }
}

extension LedgerPlanner {
    /// The largest page of ``TransactionScanning/transactions(after:limit:)``.
    package static let maximumScanPage = 10_000

    /// Validates a scan's page size.
    package static func checkScanLimit(_ limit: Int) throws(LedgerError) {
        guard (1...maximumScanPage).contains(limit) else {
            throw LedgerError(.invalidArgument, reason: "a transactions page holds 1...\(maximumScanPage), got \(limit)")
        }
    }

    /// Validates money facts given to ``TransactionScanning/fillMoneyFacts(_:of:in:)``.
    package static func checkFilledMoney(_ money: MoneyFacts, transactionId: String) throws(LedgerError) -> MoneyFacts {
        try checkIdentifier(transactionId, "transactionId")
        return try checkMoney(money, transactionId: transactionId) ?? money
    }
}

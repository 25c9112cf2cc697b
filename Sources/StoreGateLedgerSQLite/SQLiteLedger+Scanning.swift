import Foundation
public import StoreGateCore
public import StoreGateLedger

/// Reading every transaction along the unique key's index, and filling in money facts
/// (``TransactionScanning``).
extension SQLiteLedger {
    static let selectScan =
        "SELECT \(transactionColumns) FROM ledger_transactions WHERE (environment, transaction_id) > (?, ?) ORDER BY environment, transaction_id LIMIT ?"

    public func transactions(after cursor: TransactionCursor?, limit: Int) async throws(LedgerError) -> [RecordedTransaction] {
        try LedgerPlanner.checkScanLimit(limit)
        return try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in
                try Self.scan(connection, after: cursor, limit: limit)
            }
        }
    }

    @discardableResult
    public func fillMoneyFacts(_ money: MoneyFacts, of transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> Bool {
        let money = try LedgerPlanner.checkFilledMoney(money, transactionId: transactionId)
        let now = configuration.now().ledgerMilliseconds
        return try await write { connection throws(LedgerError) -> Bool in
            try Self.fillMoneyAndRollups(money, transactionId: transactionId, environment: environment, now: now, connection)
        }
    }
}

import Foundation
public import StoreGateCore

/// Reading every transaction, and filling in money facts (``TransactionScanning``).
extension InMemoryLedger {
    public func transactions(after cursor: TransactionCursor?, limit: Int) async throws(LedgerError) -> [RecordedTransaction] {
        try LedgerPlanner.checkScanLimit(limit)
        let keys = try scanKeys()
        let start = cursor.map { TransactionKey(environment: $0.environment, transactionId: $0.transactionId) }
        var page: [RecordedTransaction] = []
        for key in keys where start.map({ key > $0 }) ?? true {
            guard let row = transactionRow(key) else { continue }
            page.append(row.value)
            if page.count == limit { break }
        }
        return page
    }

    @discardableResult
    public func fillMoneyFacts(_ money: MoneyFacts, of transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> Bool {
        let money = try LedgerPlanner.checkFilledMoney(money, transactionId: transactionId)
        return try fillMoney(money, key: TransactionKey(environment: environment, transactionId: transactionId))
    }
}

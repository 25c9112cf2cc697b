import Foundation
import PostgresNIO
public import StoreGateCore
public import StoreGateLedger

/// Reading every transaction along the primary key, and filling in money facts
/// (``TransactionScanning``).
extension PostgresLedger {
    public func transactions(after cursor: TransactionCursor?, limit: Int) async throws(LedgerError) -> [RecordedTransaction] {
        try LedgerPlanner.checkScanLimit(limit)
        let values: [PostgresValue] = [
            .text(cursor?.transactionId ?? ""), .text(cursor?.environment.rawValue ?? ""), .integer(Int64(limit)),
        ]
        return try await withConnection { connection in
            try await Self.execute(ScanSQL.self, connection, values, logger: self.logger).map { row in
                try Self.decodeTransaction(row, offset: 0).value
            }
        }
    }

    @discardableResult
    public func fillMoneyFacts(_ money: MoneyFacts, of transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> Bool {
        let money = try LedgerPlanner.checkFilledMoney(money, transactionId: transactionId)
        let now = configuration.now().ledgerMilliseconds
        return try await fillMoneyAndRollups(money, transactionId: transactionId, environment: environment, now: now)
    }
}

/// A page of transactions in primary-key order.
enum ScanSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_scan_v14"
    static var sql: String {
        """
        SELECT \(PostgresLedger.transactionSelect) FROM ledger_transactions
        WHERE (transaction_id, environment) > ($1, $2) ORDER BY transaction_id, environment LIMIT $3
        """
    }
}

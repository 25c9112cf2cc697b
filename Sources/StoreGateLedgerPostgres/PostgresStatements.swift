import Logging
import NIOCore
import PostgresNIO

/// The SQL of one statement the ledger prepares on each connection.
protocol LedgerStatementSQL {
    /// The prepared statement's name, versioned with the schema.
    static var name: String { get }
    static var sql: String { get }
}

/// A ledger statement, prepared once per pooled connection and then only bound and executed.
/// The hot ones call the ledger's functions (``PostgresFunctions``), whose inner plans are
/// cached per connection.
struct PreparedLedgerStatement<SQL: LedgerStatementSQL>: PostgresPreparedStatement {
    typealias Row = PostgresRandomAccessRow

    static var name: String { SQL.name }
    static var sql: String { SQL.sql }

    var values: [PostgresValue]

    func makeBindings() throws -> PostgresBindings {
        PostgresLedger.bindings(values)
    }

    func decodeRow(_ row: PostgresRow) throws -> PostgresRandomAccessRow {
        row.makeRandomAccess()
    }
}

enum AccountSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_account_v2"
    static let sql = "SELECT * FROM ledger_account_v2($1)"
}

/// ``AccountSQL``'s rows and the account's grants (kind `g`, ``PostgresLedger/grantShape``):
/// the one-entitlement check in one round trip.
enum AccountWithGrantsSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_account_grants_v2"
    static var sql: String {
        "SELECT * FROM ledger_account_v2($1) UNION ALL " + PostgresLedger.shaped("g", PostgresLedger.grantShape) + " FROM ledger_grants g WHERE g.account_id = $1"
    }
}

enum BalanceSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_balance_v1"
    static let sql = "SELECT purchased, refunded, consumed FROM ledger_balances WHERE account_id = $1 AND product_id = $2"
}

enum TransactionSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_transaction_v2"
    static var sql: String { "SELECT \(PostgresLedger.transactionSelect) FROM ledger_transactions WHERE environment = $1 AND transaction_id = $2" }
}

enum ProofSQL: LedgerStatementSQL {
    static let name = "storegate_ledger_proof_v1"
    static let sql = "SELECT key_id, sealed FROM ledger_proofs WHERE digest = $1 AND sealed IS NOT NULL"
}

extension PostgresLedger {
    /// Runs a prepared ledger statement and collects its rows.
    static func execute<SQL: LedgerStatementSQL>(
        _ sql: SQL.Type, _ connection: PostgresConnection, _ values: [PostgresValue], logger: Logger
    ) async throws -> [PostgresRandomAccessRow] {
        var rows: [PostgresRandomAccessRow] = []
        for try await row in try await connection.execute(PreparedLedgerStatement<SQL>(values: values), logger: logger) {
            rows.append(row)
        }
        return rows
    }
}

import Foundation
import StoreGateCore
public import StoreGateLedger

/// Moves of purchase families between accounts (schema 12): the owner change and the rows'
/// updates are the plan's, in the writer's transaction; this adds support's entry point and the
/// audit row with the consumed units that went along.
extension SQLiteLedger {
    @discardableResult
    public func transfer(_ request: TransferRequest) async throws(LedgerError) -> TransferOutcome {
        let key = try LedgerPlanner.checkTransfer(request)
        let planner = self.planner
        let recordedAt = configuration.now()
        return try await write { connection throws(LedgerError) -> TransferOutcome in
            let state = try Self.loadState(connection, families: [key], transactions: [])
            let (plan, outcome) = try planner.planTransfer(request, state: state, recordedAt: recordedAt)
            if outcome.isMoved { try Self.apply(plan, at: recordedAt, connection) }
            return outcome
        }
    }

    /// Moves the consumed units that leave with a moved consumable (after the plan's balance
    /// deltas: ``TransferRow/consumedUnitsMoving(_:after:)``) and stores the move's row.
    static func storeTransfer(_ planned: TransferRow, _ connection: SQLiteConnection) throws(LedgerError) {
        var transfer = planned
        if let product = transfer.consumableProductId, transfer.consumableUnits > 0 {
            let after = try balance(connection, BalanceKey(account: transfer.from, productId: product))
            transfer.consumedMoved = TransferRow.consumedUnitsMoving(transfer.consumableUnits, after: after)
            if transfer.consumedMoved > 0 {
                let moved = SQLiteValue.integer(Int64(transfer.consumedMoved))
                try connection.run(
                    "UPDATE ledger_balances SET consumed = consumed - ?1 WHERE account_id = ?2 AND product_id = ?3",
                    [moved, .text(transfer.from.rawValue), .text(product)]
                )
                try connection.run(
                    """
                    INSERT INTO ledger_balances (account_id, product_id, purchased, refunded, consumed) VALUES (?2, ?3, 0, 0, ?1)
                    ON CONFLICT (account_id, product_id) DO UPDATE SET consumed = ledger_balances.consumed + ?1
                    """,
                    [moved, .text(transfer.to.rawValue), .text(product)]
                )
            }
        }
        try connection.run(
            """
            INSERT INTO ledger_transfers (id, environment, original_transaction_id, from_account, to_account, transferred_at, source,
                actor, reason, product_id, units, refunded_units, consumed_moved)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .text(transfer.id), .text(transfer.key.environment.rawValue), .text(transfer.key.originalTransactionId),
                .text(transfer.from.rawValue), .text(transfer.to.rawValue), .integer(transfer.transferredAt.ledgerMilliseconds),
                .text(transfer.source), .optional(transfer.actor), .optional(transfer.reason), .optional(transfer.consumableProductId),
                .integer(Int64(transfer.consumableUnits)), .integer(Int64(transfer.refundedUnits)), .integer(Int64(transfer.consumedMoved)),
            ]
        )
    }
}

import Foundation
import PostgresNIO
import StoreGateCore
public import StoreGateLedger

/// Support's move of a purchase family (schema 12): read the family, plan, and write the plan
/// with `ledger_apply_v7` (its transfers part is schema 12's `ledger_apply_v5`), which takes
/// both accounts' event locks first, refuses (retried) a family that changed or moved since it
/// was read, and moves the consumed units that go along under the old owner's balance row lock.
extension PostgresLedger {
    @discardableResult
    public func transfer(_ request: TransferRequest) async throws(LedgerError) -> TransferOutcome {
        let key = try LedgerPlanner.checkTransfer(request)
        let planner = self.planner
        let logger = self.logger
        let recordedAt = configuration.now()
        return try await withConnection { connection in
            let loaded = try await Self.load(connection, families: [key], transactions: [], notification: nil, logger: logger)
            let (plan, outcome) = try planner.planTransfer(request, state: loaded.state, recordedAt: recordedAt)
            if outcome.isMoved { try await Self.apply(plan, loaded: loaded, at: recordedAt, connection, logger: logger) }
            return outcome
        }
    }
}

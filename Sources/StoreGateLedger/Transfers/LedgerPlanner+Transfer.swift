package import Foundation
import StoreGateCore

extension LedgerPlanner {
    /// The family a manual move is about, once its arguments are checked.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` for an original transaction id, reason or
    ///   actor out of bounds.
    package static func checkTransfer(_ request: TransferRequest) throws(LedgerError) -> FamilyKey {
        let id = request.originalTransactionId
        guard !id.isEmpty, id.utf8.count <= maximumIdentifierLength else {
            throw LedgerError(.invalidArgument, reason: "originalTransactionId has 1...\(maximumIdentifierLength) UTF-8 bytes, got \(id.utf8.count)")
        }
        try checkAuditText(request.reason, name: "a transfer's reason", limit: 512)
        try checkAuditText(request.transferredBy, name: "a transfer's actor", limit: 128)
        return FamilyKey(environment: request.environment, originalTransactionId: id)
    }

    /// Plans support's move of a family to an account, against the loaded family (its rows and
    /// renewal info). Moving a family to the account that owns it plans nothing.
    ///
    /// - Throws: ``LedgerError/Code/purchaseNotFound`` when no account owns the family,
    ///   ``LedgerError/Code/appAccountTokenMismatch`` when one of its transactions is bound to an
    ///   `appAccountToken` that is not the account's (such a family never moves), or
    ///   ``LedgerError/Code/inconsistentTransaction``.
    ///
    /// - Parameter recordedAt: The ledger's clock (the events' `recordedAt`; the request's date is
    ///   their `occurredAt`).
    package func planTransfer(_ request: TransferRequest, state: PlanningState, recordedAt: Date) throws(LedgerError) -> (LedgerWritePlan, TransferOutcome) {
        let key = try Self.checkTransfer(request)
        guard let family = state.families[key], let owner = family.account else {
            throw LedgerError(
                .purchaseNotFound,
                reason: "no account owns a \(key.environment) purchase with original transaction id \(key.originalTransactionId.prefix(64))"
            )
        }
        let transactionIds = state.transactions.values.filter { $0.familyKey == key }.map(\.value.transactionId).sorted()
        guard owner != request.account else {
            let outcome = TransferOutcome(
                environment: key.environment, originalTransactionId: key.originalTransactionId, from: owner, to: owner, isMoved: false,
                transferId: nil, transactionIds: transactionIds
            )
            return (LedgerWritePlan(), outcome)
        }
        var builder = PlanBuilder(state: state)
        try builder.transfer(
            key, to: request.account, token: configuration.accountTokenPolicy.token(for: request.account), refusal: .appAccountTokenMismatch,
            at: request.date.ledgerNormalized, source: LedgerEvent.transferSource, actor: request.transferredBy, reason: request.reason
        )
        var plan = builder.finish(proof: nil)
        EventPlanner.addEvents(to: &plan, state: state, cause: EventCause(recordedAt: recordedAt, source: LedgerEvent.transferSource))
        let outcome = TransferOutcome(
            environment: key.environment, originalTransactionId: key.originalTransactionId, from: owner, to: request.account, isMoved: true,
            transferId: plan.transfers.first?.id, transactionIds: transactionIds
        )
        return (plan, outcome)
    }

    /// Checks an audited text: 1...`limit` bytes without control characters.
    static func checkAuditText(_ text: String, name: String, limit: Int) throws(LedgerError) {
        guard !text.isEmpty, text.utf8.count <= limit, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw LedgerError(.invalidArgument, reason: "\(name) has 1...\(limit) bytes without control characters")
        }
    }
}

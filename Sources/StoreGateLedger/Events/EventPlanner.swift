package import Foundation
import StoreGateCore

/// What caused a change, for the events it emits.
package struct EventCause: Sendable {
    /// When the ledger records the change; time-dependent states are computed at this date.
    package var recordedAt: Date
    /// A ``ProofKind`` raw value, or ``LedgerEvent/consumptionSource``.
    package var source: String
    package var notification: NotificationSummary?

    package init(recordedAt: Date, source: String, notification: NotificationSummary? = nil) {
        self.recordedAt = recordedAt.ledgerNormalized
        self.source = source
        self.notification = notification
    }
}

/// Derives the events of a write plan from the rows it was planned against: pure and shared
/// by every backend, like the planner, so each backend emits exactly the same events.
///
/// It compares each touched purchase family before and after the plan, as seen by the
/// family's owner (a family no account owns emits nothing until its proof claims it).
package enum EventPlanner {
    package static func events(for plan: LedgerWritePlan, state: PlanningState, cause: EventCause) -> [LedgerEvent] {
        var changedByFamily: [FamilyKey: [TransactionRow]] = [:]
        for row in plan.transactionInserts + plan.transactionUpdates {
            changedByFamily[row.familyKey, default: []].append(row)
        }
        var owners: [FamilyKey: AccountID?] = [:]
        for family in plan.familyInserts + plan.familyClaims { owners[family.key] = family.account }
        let touched = Set(changedByFamily.keys).union(plan.renewals.map(\.key)).sorted()
        var events: [LedgerEvent] = []
        for family in touched {
            let owner = owners[family] ?? state.families[family]?.account
            guard let owner else { continue }
            var builder = FamilyEvents(
                family: family, owner: owner, cause: cause,
                before: state.transactions.values.filter { $0.familyKey == family && $0.value.account == owner },
                changed: changedByFamily[family] ?? [],
                unchanged: state.transactions.values.filter { $0.familyKey == family },
                renewalBefore: state.renewals[family],
                renewalIncoming: plan.renewals.first { $0.key == family }
            )
            events += builder.derive()
        }
        return events
    }

    /// The event of a proof refused because its purchase belongs to another account.
    package static func refusal(_ error: LedgerError, prepared: PreparedProof) -> LedgerEvent? {
        guard error.code == .ownedByAnotherAccount else { return nil }
        let transaction = prepared.transactions.first { $0.value.transactionId == error.transactionId } ?? prepared.transactions.first
        guard let transaction else { return nil }
        let receivedAt = prepared.proof.receivedAt
        return LedgerEvent(
            id: newID(), sequence: 0, type: .proofRefused, account: prepared.account,
            productId: transaction.value.productId, environment: transaction.value.environment,
            transactionId: transaction.value.transactionId, originalTransactionId: transaction.value.originalTransactionId,
            occurredAt: receivedAt, recordedAt: receivedAt, source: prepared.proof.kind.rawValue,
            refusal: error.code.description, entitlement: nil
        )
    }

    /// The event of a consumption (not of a replay), with the balance after it.
    package static func consumption(_ receipt: ConsumptionReceipt, balance: ConsumableBalance, recordedAt: Date) -> LedgerEvent {
        LedgerEvent(
            id: newID(), sequence: 0, type: .consumableConsumed, account: receipt.account, productId: receipt.productId,
            environment: nil, transactionId: nil, originalTransactionId: nil, occurredAt: receipt.consumedAt,
            recordedAt: recordedAt.ledgerNormalized, source: LedgerEvent.consumptionSource, quantity: receipt.quantity,
            idempotencyKey: receipt.idempotencyKey,
            entitlement: LedgerEvent.Entitlement(productType: .consumable, isEntitled: balance.available > 0, balance: balance)
        )
    }

    static func newID() -> String {
        UUID().uuidString.lowercased()
    }
}

extension [LedgerEvent] {
    /// Sets the balance after the change on each consumable event, from the stored counters
    /// the backend read back inside the same transaction.
    package mutating func settleBalances(_ balance: (BalanceKey) throws(LedgerError) -> ConsumableBalance) throws(LedgerError) {
        for index in indices where self[index].entitlement?.productType == .consumable && self[index].type != .consumableConsumed {
            let event = self[index]
            let stored = try balance(BalanceKey(account: event.account, productId: event.productId))
            self[index].entitlement?.balance = stored
            self[index].entitlement?.isEntitled = stored.available > 0
        }
    }

    /// The balances ``settleBalances(_:)`` needs.
    package var balanceKeys: [BalanceKey] {
        var keys = Set<BalanceKey>()
        for event in self where event.entitlement?.productType == .consumable && event.type != .consumableConsumed {
            keys.insert(BalanceKey(account: event.account, productId: event.productId))
        }
        return keys.sorted()
    }
}

/// The events of one purchase family.
private struct FamilyEvents {
    let family: FamilyKey
    let owner: AccountID
    let cause: EventCause
    /// The family's transactions the owner held before.
    let before: [TransactionKey: TransactionRow]
    /// The family's transactions the owner holds after.
    let after: [TransactionKey: TransactionRow]
    let renewalBefore: RenewalRow?
    let renewalAfter: RenewalRow?

    init(
        family: FamilyKey, owner: AccountID, cause: EventCause, before: [TransactionRow], changed: [TransactionRow],
        unchanged: [TransactionRow], renewalBefore: RenewalRow?, renewalIncoming: RenewalRow?
    ) {
        self.family = family
        self.owner = owner
        self.cause = cause
        self.before = Dictionary(before.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        var after = Dictionary(unchanged.map { ($0.key, $0) }, uniquingKeysWith: { first, _ in first })
        for row in changed { after[row.key] = row }
        self.after = after.filter { $0.value.value.account == owner }
        self.renewalBefore = renewalBefore
        if let incoming = renewalIncoming {
            self.renewalAfter = renewalBefore.map { incoming.supersedes($0) ? incoming : $0 } ?? incoming
        } else {
            self.renewalAfter = renewalBefore
        }
    }

    mutating func derive() -> [LedgerEvent] {
        let stateAfter = subscriptionState(after, renewalAfter)
        var events: [LedgerEvent] = []
        let gained = after.values.filter { before[$0.key] == nil }
            .sorted { ($0.value.purchaseDate, $0.value.transactionId) < ($1.value.purchaseDate, $1.value.transactionId) }
        for (index, row) in gained.enumerated() {
            let value = row.value
            let type: LedgerEvent.EventType
            switch value.productType {
            case .consumable: type = .consumableCredited
            case .autoRenewable: type = before.isEmpty && index == 0 ? .purchaseRecorded : .subscriptionRenewed
            default: type = .purchaseRecorded
            }
            events.append(event(type, row, occurredAt: value.purchaseDate, quantity: value.quantity, stateAfter: stateAfter))
        }
        let changed = after.values.filter { row in before[row.key].map { $0 != row } ?? false }.sorted { $0.key < $1.key }
        for row in changed {
            guard let old = before[row.key]?.value else { continue }
            if old.revocationDate == nil, let revoked = row.value.revocationDate {
                var revocation = event(.transactionRevoked, row, occurredAt: revoked, quantity: row.value.quantity, stateAfter: stateAfter)
                revocation.revocationReason = row.value.revocationReason
                events.append(revocation)
            } else if old.revocationDate != nil, row.value.revocationDate == nil {
                events.append(event(.transactionReinstated, row, occurredAt: row.value.observedAt, quantity: row.value.quantity, stateAfter: stateAfter))
            }
        }
        guard let anchor = after.values.max(by: { ($0.value.purchaseDate, $0.value.transactionId) < ($1.value.purchaseDate, $1.value.transactionId) }) else {
            return events
        }
        if let old = renewalBefore, let new = renewalAfter, old != new, !before.isEmpty {
            if old.willAutoRenew != new.willAutoRenew {
                events.append(event(new.willAutoRenew ? .autoRenewEnabled : .autoRenewDisabled, anchor, occurredAt: new.observedAt, stateAfter: stateAfter))
            }
            if let from = old.autoRenewProductId, let to = new.autoRenewProductId, from != to {
                events.append(event(.renewalProductChanged, anchor, occurredAt: new.observedAt, stateAfter: stateAfter))
            }
        }
        if let stateAfter, !before.isEmpty, let stateBefore = subscriptionState(before, renewalBefore), stateBefore.state != stateAfter.state {
            var change = event(.subscriptionStateChanged, anchor, occurredAt: cause.recordedAt, stateAfter: stateAfter)
            change.previousState = stateBefore.state
            change.productId = stateAfter.productId
            change.transactionId = stateAfter.decidingTransactionId
            events.append(change)
        }
        return events
    }

    /// The state of the family's auto-renewable subscription at the recording date.
    func subscriptionState(_ rows: [TransactionKey: TransactionRow], _ renewal: RenewalRow?) -> SubscriptionStatus? {
        let subscriptions = rows.values.map(\.value).filter { $0.productType == .autoRenewable }
            .sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        guard let first = subscriptions.first else { return nil }
        return EntitlementCalculator.subscription(
            group: first.subscriptionGroup, transactions: subscriptions, renewals: renewal.map { [family: $0] } ?? [:],
            notifications: [], at: cause.recordedAt
        )
    }

    func event(
        _ type: LedgerEvent.EventType, _ row: TransactionRow, occurredAt: Date, quantity: Int? = nil, stateAfter: SubscriptionStatus?
    ) -> LedgerEvent {
        let value = row.value
        return LedgerEvent(
            id: EventPlanner.newID(), sequence: 0, type: type, account: owner, productId: value.productId,
            environment: value.environment, transactionId: value.transactionId, originalTransactionId: value.originalTransactionId,
            occurredAt: occurredAt, recordedAt: cause.recordedAt, source: cause.source,
            notificationType: cause.notification?.notificationType, notificationSubtype: cause.notification?.subtype,
            notificationUUID: cause.notification?.notificationUUID, quantity: quantity,
            entitlement: entitlement(for: value, stateAfter: stateAfter)
        )
    }

    func entitlement(for value: RecordedTransaction, stateAfter: SubscriptionStatus?) -> LedgerEvent.Entitlement {
        switch value.productType {
        case .autoRenewable:
            return LedgerEvent.Entitlement(
                productType: .autoRenewable, isEntitled: stateAfter?.isEntitled ?? false, state: stateAfter?.state,
                productId: stateAfter?.productId, expiresDate: stateAfter?.expiresDate, willAutoRenew: stateAfter?.willAutoRenew,
                autoRenewProductId: stateAfter?.autoRenewProductId
            )
        case .consumable:
            // The backend sets the balance it stored (``Array/settleBalances(_:)``).
            return LedgerEvent.Entitlement(productType: .consumable, isEntitled: false)
        case .nonConsumable, .nonRenewing:
            let stands = after.values.contains { $0.value.productId == value.productId && !$0.value.isRevoked }
            return LedgerEvent.Entitlement(productType: value.productType, isEntitled: stands)
        default:
            return LedgerEvent.Entitlement(productType: value.productType, isEntitled: false)
        }
    }
}

package import Foundation
import StoreGateCore
import Synchronization

/// What caused a change, for the events it emits.
package struct EventCause: Sendable {
    /// When the ledger records the change; time-dependent states are computed at this date.
    package var recordedAt: Date
    /// A ``ProofKind`` raw value, or ``LedgerEvent/consumptionSource``.
    package var source: String
    package var notification: RecordedNotification?

    package init(recordedAt: Date, source: String, notification: RecordedNotification? = nil) {
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
    /// Sets the plan's events and the touched families' next time-driven transitions.
    ///
    /// A touched family whose stored ``FamilyRow/nextTransitionAt`` has passed first gets the
    /// transitions time made since (``SubscriptionClock``), so its stream never shows a late
    /// renewal's `expired → active` without the `active → expired` before it.
    package static func addEvents(to plan: inout LedgerWritePlan, state: PlanningState, cause: EventCause) {
        var changedByFamily: [FamilyKey: [TransactionRow]] = [:]
        for row in plan.transactionInserts { changedByFamily[row.familyKey, default: []].append(row) }
        for row in plan.transactionUpdates { changedByFamily[row.familyKey, default: []].append(row) }
        for renewal in plan.renewals where changedByFamily[renewal.key] == nil { changedByFamily[renewal.key] = [] }
        for transfer in plan.transfers where changedByFamily[transfer.key] == nil { changedByFamily[transfer.key] = [] }
        guard !changedByFamily.isEmpty else { return }
        // The stored rows of the touched families, grouped in one pass.
        var storedByFamily: [FamilyKey: [TransactionRow]] = [:]
        if !state.transactions.isEmpty {
            for row in state.transactions.values where changedByFamily[row.familyKey] != nil {
                storedByFamily[row.familyKey, default: []].append(row)
            }
        }
        var events: [LedgerEvent] = []
        for (family, changed) in changedByFamily.sorted(by: { $0.key < $1.key }) {
            let inserted = plan.familyInserts.firstIndex { $0.key == family }
            let stored = state.families[family]
            let transfer = plan.transfers.first { $0.key == family }
            let owner = inserted.map { plan.familyInserts[$0].account }
                ?? plan.familyClaims.first { $0.key == family }?.account
                ?? transfer?.to
                ?? stored?.account
            let storedRows = storedByFamily[family] ?? []
            if let stored, let due = stored.nextTransitionAt, due <= cause.recordedAt {
                events += SubscriptionClock.transitions(of: stored, rows: storedRows, renewal: state.renewals[family], until: cause.recordedAt).events
            }
            var next: Date?
            if let owner {
                // A family that moves is compared as if its new owner had held it before: the
                // move is told by the two transfer events, and the facts this plan brought (a
                // renewal, a refund) get their own events, as they would on any owner.
                let held = transfer == nil ? storedRows : storedRows.map { row in
                    var relabelled = row
                    relabelled.value.account = owner
                    return relabelled
                }
                var builder = FamilyEvents(
                    family: family, owner: owner, cause: cause,
                    before: held.filter { $0.value.account == owner },
                    changed: changed,
                    unchanged: held,
                    renewalBefore: state.renewals[family],
                    renewalIncoming: plan.renewals.first { $0.key == family }
                )
                if let transfer { events += builder.transferEvents(transfer) }
                events += builder.derive()
                next = builder.nextBoundary(after: cause.recordedAt)
            }
            if let inserted {
                plan.familyInserts[inserted].nextTransitionAt = next
            } else if let stored, stored.nextTransitionAt != next {
                plan.nextTransitions.append(NextTransition(key: family, at: next))
            }
        }
        plan.events = events
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

    /// A new event id: a UUID (version 8, RFC 9562) made of 64 random bits drawn once per
    /// process and a per-process counter, so ids are unique without a random draw (a system
    /// call) per event.
    static func newID() -> String {
        EventIDs.shared.next()
    }
}

extension [LedgerEvent] {
    /// Sets the balance after the change on each consumable event, from the stored counters
    /// the backend read back inside the same transaction.
    package mutating func settleBalances(_ balance: (BalanceKey) throws(LedgerError) -> ConsumableBalance) throws(LedgerError) {
        for index in indices where self[index].needsStoredBalance {
            let event = self[index]
            let stored = try balance(BalanceKey(account: event.account, productId: event.productId))
            self[index].entitlement?.balance = stored
            self[index].entitlement?.isEntitled = stored.available > 0
        }
    }
}

/// The events of one purchase family. Families hold a handful of transactions, so the rows
/// are kept in arrays and searched linearly (cheaper than hashing at these sizes).
struct FamilyEvents {
    let family: FamilyKey
    let owner: AccountID
    let cause: EventCause
    /// The family's transactions the owner held before.
    let before: [TransactionRow]
    /// The family's transactions the owner holds after, by purchase date.
    let after: [TransactionRow]
    let renewalBefore: RenewalRow?
    let renewalAfter: RenewalRow?

    init(
        family: FamilyKey, owner: AccountID, cause: EventCause, before: [TransactionRow], changed: [TransactionRow],
        unchanged: [TransactionRow], renewalBefore: RenewalRow?, renewalIncoming: RenewalRow?
    ) {
        self.family = family
        self.owner = owner
        self.cause = cause
        self.before = before
        var after: [TransactionRow] = []
        after.reserveCapacity(unchanged.count + changed.count)
        for row in unchanged where !changed.contains(where: { $0.key == row.key }) && row.value.account == owner {
            after.append(row)
        }
        for row in changed where row.value.account == owner { after.append(row) }
        if after.count > 1 { after.sort { ($0.value.purchaseDate, $0.value.transactionId) < ($1.value.purchaseDate, $1.value.transactionId) } }
        self.after = after
        self.renewalBefore = renewalBefore
        if let incoming = renewalIncoming {
            self.renewalAfter = renewalBefore.map { incoming.supersedes($0) ? incoming : $0 } ?? incoming
        } else {
            self.renewalAfter = renewalBefore
        }
    }

    func stored(_ key: TransactionKey) -> TransactionRow? {
        before.first { $0.key == key }
    }

    mutating func derive() -> [LedgerEvent] {
        let stateAfter = subscriptionState(after, renewalAfter)
        var events: [LedgerEvent] = []
        // Each transaction's events are its facts, whatever order they arrived in: its gain
        // (decided by the transaction itself, not by what the ledger had seen of its family),
        // then its refund and its upgrade — when they arrive later, or at once with it (a
        // refund the sync recovered before the purchase).
        for row in after {
            let value = row.value
            guard let old = stored(row.key) else {
                // Newly the owner's (`after` is by purchase date).
                let type: LedgerEvent.EventType
                switch value.productType {
                case .consumable: type = .consumableCredited
                case .autoRenewable: type = value.transactionId == value.originalTransactionId ? .purchaseRecorded : .subscriptionRenewed
                default: type = .purchaseRecorded
                }
                events.append(event(type, row, occurredAt: value.purchaseDate, quantity: value.quantity, stateAfter: stateAfter))
                if let revoked = value.revocationDate {
                    events.append(revocation(row, at: revoked, stateAfter: stateAfter))
                }
                if value.isUpgraded {
                    events.append(event(.subscriptionUpgraded, row, occurredAt: value.observedAt, stateAfter: stateAfter))
                }
                continue
            }
            guard old != row else { continue }
            if old.value.revocationDate == nil, let revoked = value.revocationDate {
                events.append(revocation(row, at: revoked, stateAfter: stateAfter))
            } else if old.value.revocationDate != nil, value.revocationDate == nil {
                events.append(event(.transactionReinstated, row, occurredAt: value.observedAt, quantity: value.quantity, stateAfter: stateAfter))
            }
            if !old.value.isUpgraded, value.isUpgraded {
                events.append(event(.subscriptionUpgraded, row, occurredAt: value.observedAt, stateAfter: stateAfter))
            }
        }
        guard !before.isEmpty, let anchor = after.last else { return events }
        if let old = renewalBefore, let new = renewalAfter, old != new {
            if old.willAutoRenew != new.willAutoRenew {
                events.append(event(new.willAutoRenew ? .autoRenewEnabled : .autoRenewDisabled, anchor, occurredAt: new.observedAt, stateAfter: stateAfter))
            }
            if let from = old.autoRenewProductId, let to = new.autoRenewProductId, from != to {
                events.append(event(.renewalProductChanged, anchor, occurredAt: new.observedAt, stateAfter: stateAfter))
            }
        }
        if let stateAfter, let stateBefore = subscriptionState(before, renewalBefore), stateBefore.state != stateAfter.state {
            var change = event(.subscriptionStateChanged, anchor, occurredAt: cause.recordedAt, stateAfter: stateAfter)
            change.previousState = stateBefore.state
            change.productId = stateAfter.productId
            change.transactionId = stateAfter.decidingTransactionId
            events.append(change)
        }
        return events
    }

    /// The two events of the family's move: `out` on the account it left (entitled to nothing
    /// through it any more; a consumable's balance is the one stored after the move), then
    /// `in` on its new owner with what it holds now. Both name the family and no transaction,
    /// whichever transaction the move came with: the move is the family's, and each
    /// transaction's events then do not depend on the order the family's facts arrived in.
    func transferEvents(_ transfer: TransferRow) -> [LedgerEvent] {
        let anchor = after.first { $0.value.transactionId == family.originalTransactionId } ?? after.last
        guard let anchor else { return [] }
        let stateAfter = subscriptionState(after, renewalAfter)
        let quantity = transfer.consumableUnits > 0 ? transfer.consumableUnits : nil
        var incoming = event(.purchaseTransferred, anchor, occurredAt: transfer.transferredAt, quantity: quantity, stateAfter: stateAfter)
        incoming.transactionId = nil
        if let productId = stateAfter?.productId { incoming.productId = productId }
        incoming.transfer = LedgerEvent.Transfer(
            id: transfer.id, direction: .incoming, from: transfer.from, to: transfer.to, actor: transfer.actor, reason: transfer.reason
        )
        var outgoing = incoming
        outgoing.id = EventPlanner.newID()
        outgoing.account = transfer.from
        outgoing.transfer?.direction = .outgoing
        // Nothing of the family is left on the old account.
        outgoing.entitlement = LedgerEvent.Entitlement(productType: anchor.value.productType, isEntitled: false)
        return [outgoing, incoming]
    }

    /// The refund or revocation of `row`.
    func revocation(_ row: TransactionRow, at date: Date, stateAfter: SubscriptionEntitlement?) -> LedgerEvent {
        var revocation = event(.transactionRevoked, row, occurredAt: date, quantity: row.value.quantity, stateAfter: stateAfter)
        revocation.revocationReason = row.value.revocationReason
        return revocation
    }

    /// The state of the family's auto-renewable subscription at `date` (the recording date by default).
    func subscriptionState(_ rows: [TransactionRow], _ renewal: RenewalRow?, at date: Date? = nil) -> SubscriptionEntitlement? {
        guard rows.contains(where: { $0.value.productType == .autoRenewable }) else { return nil }
        let subscriptions = rows.map(\.value).filter { $0.productType == .autoRenewable }
            .sorted { ($0.purchaseDate, $0.transactionId) < ($1.purchaseDate, $1.transactionId) }
        guard let first = subscriptions.first else { return nil }
        return EntitlementCalculator.subscription(
            group: first.subscriptionGroup, transactions: subscriptions, renewals: renewal.map { [family: $0] } ?? [:],
            notifications: [], at: date ?? cause.recordedAt
        )
    }

    func event(
        _ type: LedgerEvent.EventType, _ row: TransactionRow, occurredAt: Date, quantity: Int? = nil, stateAfter: SubscriptionEntitlement?
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

    func entitlement(for value: RecordedTransaction, stateAfter: SubscriptionEntitlement?) -> LedgerEvent.Entitlement {
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
            let stands = after.contains { $0.value.productId == value.productId && !$0.value.isRevoked }
            return LedgerEvent.Entitlement(productType: value.productType, isEntitled: stands)
        default:
            return LedgerEvent.Entitlement(productType: value.productType, isEntitled: false)
        }
    }
}

/// The event ids of this process.
private final class EventIDs: Sendable {
    static let shared = EventIDs()

    private let prefix: UInt64 = UInt64.random(in: .min ... .max)
    private let counter = Atomic<UInt64>(0)

    func next() -> String {
        let count = counter.add(1, ordering: .relaxed).newValue
        // Version 8 in the high nibble of byte 6, variant 10 in byte 8.
        let high = (prefix & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_8000
        let low = (count & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
        // 8-4-4-4-12 lowercase hexadecimal digits, as UUIDs are written, straight into the
        // string's storage (a byte array, a hex string and four inserts cost a quarter of the
        // events' planning).
        return String(unsafeUninitializedCapacity: 36) { text in
            var position = 0
            for nibble in 0..<32 {
                if nibble == 8 || nibble == 12 || nibble == 16 || nibble == 20 {
                    text[position] = UInt8(ascii: "-")
                    position += 1
                }
                let word = nibble < 16 ? high : low
                let value = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * (nibble % 16))) & 0xF
                text[position] = value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
                position += 1
            }
            return position
        }
    }
}

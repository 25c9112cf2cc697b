import Foundation
import StoreGateCore

extension LedgerPlanner {
    /// Plans recording a prepared proof against the loaded rows.
    ///
    /// The first account to record a purchase family owns it; a family only notifications
    /// mentioned is claimed, with its transactions. A family owned by another account refuses
    /// the whole proof (nothing is written) under ``TransferPolicy/refuse``; under
    /// ``TransferPolicy/transfer`` it moves to this account with every transaction and unit it
    /// holds — unless one of its transactions is bound to an `appAccountToken` that is not this
    /// account's, which still refuses the proof.
    ///
    /// - Throws: ``LedgerError/Code/ownedByAnotherAccount`` or
    ///   ``LedgerError/Code/inconsistentTransaction``.
    package func plan(_ prepared: PreparedProof, state: PlanningState) throws(LedgerError) -> (LedgerWritePlan, RecordOutcome) {
        var builder = PlanBuilder(state: state)
        let account = prepared.account
        for incoming in prepared.transactions {
            let familyKey = incoming.familyKey
            if let family = builder.families[familyKey] {
                if family.account == nil {
                    builder.claim(familyKey, for: account)
                } else if family.account != account {
                    guard configuration.transferPolicy == .transfer else {
                        throw LedgerError(
                            .ownedByAnotherAccount,
                            reason: "the purchase belongs to another account",
                            transactionId: incoming.value.transactionId
                        )
                    }
                    try builder.transfer(
                        familyKey, to: account, token: configuration.accountTokenPolicy.token(for: account), refusal: .ownedByAnotherAccount,
                        at: prepared.proof.receivedAt, source: prepared.proof.kind.rawValue, actor: nil, reason: nil
                    )
                }
            } else {
                builder.insertFamily(FamilyRow(key: familyKey, account: account))
            }
            var owned = incoming
            owned.value.account = account
            try builder.take(owned)
        }
        var plan = builder.finish(proof: prepared.proof)
        if let renewal = prepared.renewal { plan.renewals = [renewal] }
        addRollupDeltas(to: &plan, state: state, transactions: builder.transactions)
        EventPlanner.addEvents(
            to: &plan, state: state, cause: EventCause(recordedAt: prepared.proof.receivedAt, source: prepared.proof.kind.rawValue)
        )
        let ids = Set(prepared.transactions.map(\.key))
        let outcome = RecordOutcome(
            account: account,
            newTransactionIds: builder.inserted.keys.filter(ids.contains).sorted().map(\.transactionId),
            updatedTransactionIds: builder.updated.keys.filter { ids.contains($0) && builder.inserted[$0] == nil }.sorted().map(\.transactionId),
            unchangedTransactionIds: ids.filter { builder.inserted[$0] == nil && builder.updated[$0] == nil }.sorted().map(\.transactionId),
            transferredOriginalTransactionIds: plan.transfers.map(\.key.originalTransactionId)
        )
        return (plan, outcome)
    }

    /// Plans taking a prepared notification (the backend checked it is new) against the
    /// loaded rows. Its transaction accrues to the family's owner, or waits unowned.
    package func plan(_ prepared: PreparedNotification, state: PlanningState) throws(LedgerError) -> (LedgerWritePlan, NotificationOutcome) {
        var builder = PlanBuilder(state: state)
        var owner: AccountID?
        if var incoming = prepared.transaction {
            let familyKey = incoming.familyKey
            if let family = builder.families[familyKey] {
                owner = family.account
            } else {
                builder.insertFamily(FamilyRow(key: familyKey, account: nil))
            }
            incoming.value.account = owner
            try builder.take(incoming)
        }
        var plan = builder.finish(proof: prepared.proof)
        plan.notification = prepared.notification
        if let renewal = prepared.renewal { plan.renewals = [renewal] }
        addRollupDeltas(to: &plan, state: state, transactions: builder.transactions)
        EventPlanner.addEvents(
            to: &plan, state: state,
            cause: EventCause(recordedAt: prepared.proof.receivedAt, source: ProofKind.notification.rawValue, notification: prepared.notification.summary)
        )
        let outcome = NotificationOutcome(
            notificationUUID: prepared.notification.summary.notificationUUID,
            isDuplicate: false,
            account: owner,
            transactionId: prepared.transaction?.value.transactionId
        )
        return (plan, outcome)
    }
}

extension LedgerPlanner {
    /// Sets the plan's rollup changes (``rollupDeltas(state:transactions:plan:)``) and whether
    /// the write queues them (``LedgerConfiguration/queuesRollupChanges``), then encoded
    /// (``LedgerWritePlan/encodeRollupDeltas()``).
    func addRollupDeltas(to plan: inout LedgerWritePlan, state: PlanningState, transactions: [TransactionKey: TransactionRow]) {
        plan.rollupDeltas = rollupDeltas(state: state, transactions: transactions, plan: plan)
        plan.queuesRollupChanges = configuration.queuesRollupChanges
        plan.addsRollupDays = configuration.addsRollupDays
        if plan.queuesRollupChanges, !plan.rollupDeltas.isEmpty { plan.encodeRollupDeltas() }
    }

    /// The rollup changes of a plan: for each family whose transactions or renewal info it
    /// writes, the family's contribution after the plan less its contribution before
    /// (``FamilyRollup``), computed from what changed (``FamilyRollup/change(from:renewal:to:renewal:)``);
    /// none when the configuration keeps no rollups (``LedgerConfiguration/maintainsRollups``).
    ///
    /// - Parameters:
    ///   - state: The rows loaded before planning (every transaction of each touched family).
    ///   - transactions: The working view after the plan.
    ///   - plan: The plan's writes.
    package func rollupDeltas(
        state: PlanningState, transactions: [TransactionKey: TransactionRow], plan: LedgerWritePlan
    ) -> [Rollup] {
        guard configuration.maintainsRollups else { return [] }
        var touched = Set<FamilyKey>()
        for row in plan.transactionInserts { touched.insert(row.familyKey) }
        for row in plan.transactionUpdates { touched.insert(row.familyKey) }
        for renewal in plan.renewals where state.renewals[renewal.key].map({ renewal.supersedes($0) }) ?? true {
            touched.insert(renewal.key)
        }
        guard !touched.isEmpty else { return [] }
        func change(_ key: FamilyKey, from before: [RecordedTransaction], to after: [RecordedTransaction]) -> [Rollup] {
            let oldRenewal = state.renewals[key]
            var newRenewal = oldRenewal
            for renewal in plan.renewals where renewal.key == key {
                if newRenewal.map({ renewal.supersedes($0) }) ?? true { newRenewal = renewal }
            }
            // The transactions the plan writes are the only ones that differ (the working view
            // changes through `PlanBuilder.store(_:replacing:)` alone, which records each).
            var changed: [String] = []
            for row in plan.transactionInserts where row.familyKey == key { changed.append(row.value.transactionId) }
            for row in plan.transactionUpdates where row.familyKey == key { changed.append(row.value.transactionId) }
            return FamilyRollup.change(from: before, renewal: oldRenewal, to: after, renewal: newRenewal, changed: changed)
        }
        if touched.count == 1, let key = touched.first {
            // Most writes touch one family: its rows picked by comparing keys, none hashed;
            // its change is already merged and sorted.
            let before = state.transactions.values.compactMap { $0.familyKey == key ? $0.value : nil }
            let after = transactions.values.compactMap { $0.familyKey == key ? $0.value : nil }
            return change(key, from: before, to: after)
        }
        var before: [FamilyKey: [RecordedTransaction]] = [:]
        var after: [FamilyKey: [RecordedTransaction]] = [:]
        for row in state.transactions.values where touched.contains(row.familyKey) { before[row.familyKey, default: []].append(row.value) }
        for row in transactions.values where touched.contains(row.familyKey) { after[row.familyKey, default: []].append(row.value) }
        var deltas: [Rollup] = []
        for key in touched.sorted() { deltas += change(key, from: before[key] ?? [], to: after[key] ?? []) }
        return Rollup.merged(deltas)
    }
}

/// Accumulates a plan while keeping the working view of the rows up to date.
struct PlanBuilder {
    var families: [FamilyKey: FamilyRow]
    var transactions: [TransactionKey: TransactionRow]
    /// The rows as loaded: a move's units are the stored ones, never a new purchase's.
    let storedTransactions: [TransactionKey: TransactionRow]
    var familyInserts: [FamilyKey: FamilyRow] = [:]
    var familyClaims: [FamilyKey: FamilyRow] = [:]
    var transfers: [FamilyKey: TransferRow] = [:]
    var inserted: [TransactionKey: TransactionRow] = [:]
    var updated: [TransactionKey: TransactionRow] = [:]
    var deltas: [BalanceKey: (purchased: Int, refunded: Int)] = [:]

    init(state: PlanningState) {
        families = state.families
        transactions = state.transactions
        storedTransactions = state.transactions
    }

    /// Moves an owned family and every transaction of it to `account` (their counters follow,
    /// through ``store(_:replacing:)``).
    ///
    /// - Parameters:
    ///   - token: `account`'s `appAccountToken`: a transaction bound to another token refuses
    ///     the move with `refusal`.
    ///   - source, actor, reason: For the move's row and events.
    /// - Throws: `refusal`, or ``LedgerError/Code/inconsistentTransaction`` for a family holding
    ///   consumables of several products (Apple makes one transaction a consumable family).
    mutating func transfer(
        _ key: FamilyKey, to account: AccountID, token: UUID?, refusal: LedgerError.Code, at date: Date, source: String, actor: String?,
        reason: String?
    ) throws(LedgerError) {
        guard let family = families[key], let from = family.account, from != account else { return }
        let rows = transactions.values.filter { $0.familyKey == key }.sorted { $0.key < $1.key }
        if let bound = rows.first(where: { row in row.value.appAccountToken.map { $0 != token } ?? false }) {
            throw LedgerError(
                refusal, reason: "the purchase is bound to another account's appAccountToken: it never moves to this account",
                transactionId: bound.value.transactionId
            )
        }
        let consumables = Set(rows.filter { $0.value.productType == .consumable }.map(\.value.productId))
        guard consumables.count <= 1 else {
            throw LedgerError(.inconsistentTransaction, reason: "the purchase family holds consumables of several products; it cannot move")
        }
        families[key] = FamilyRow(key: key, account: account, nextTransitionAt: family.nextTransitionAt)
        transfers[key] = TransferRow(
            id: EventPlanner.newID(), key: key, from: from, to: account, transferredAt: date, source: source, actor: actor, reason: reason,
            consumableProductId: consumables.first, consumableUnits: 0
        )
        for row in rows {
            var moved = row
            moved.value.account = account
            store(moved, replacing: row)
        }
    }

    mutating func insertFamily(_ family: FamilyRow) {
        families[family.key] = family
        familyInserts[family.key] = family
    }

    /// Gives an unowned family and its unowned transactions to `account`.
    mutating func claim(_ key: FamilyKey, for account: AccountID) {
        let family = FamilyRow(key: key, account: account)
        families[key] = family
        if familyInserts[key] != nil { familyInserts[key] = family } else { familyClaims[key] = family }
        let unowned = transactions.values
            .filter { $0.familyKey == key && $0.value.account == nil }
            .sorted { $0.key < $1.key }
        for row in unowned {
            var claimed = row
            claimed.value.account = account
            store(claimed, replacing: row)
        }
    }

    /// Takes one observation of a transaction whose owner is already set from its family.
    mutating func take(_ incoming: TransactionRow) throws(LedgerError) {
        guard let existing = transactions[incoming.key] else {
            store(incoming, replacing: nil)
            return
        }
        guard existing.value.originalTransactionId == incoming.value.originalTransactionId,
              existing.value.productId == incoming.value.productId
        else {
            throw LedgerError(
                .inconsistentTransaction,
                reason: "the transaction was recorded before with another original transaction id or product",
                transactionId: incoming.value.transactionId
            )
        }
        if let owner = existing.value.account, owner != incoming.value.account {
            throw LedgerError(.ownedByAnotherAccount, reason: "the purchase belongs to another account", transactionId: incoming.value.transactionId)
        }
        var merged = existing.merged(with: incoming)
        merged.value.account = incoming.value.account
        if merged != existing { store(merged, replacing: existing) }
    }

    mutating func store(_ row: TransactionRow, replacing old: TransactionRow?) {
        transactions[row.key] = row
        if inserted[row.key] != nil || old == nil {
            inserted[row.key] = row
        } else {
            updated[row.key] = row
        }
        if let before = old?.balanceContribution { add(before, sign: -1) }
        if let after = row.balanceContribution { add(after, sign: 1) }
    }

    private mutating func add(_ delta: BalanceDelta, sign: Int) {
        var current = deltas[delta.key] ?? (0, 0)
        current.purchased += sign * delta.purchased
        current.refunded += sign * delta.refunded
        deltas[delta.key] = current
    }

    func finish(proof: ProofRow?) -> LedgerWritePlan {
        var plan = LedgerWritePlan(proof: proof)
        plan.familyInserts = familyInserts.values.sorted { $0.key < $1.key }
        plan.familyClaims = familyClaims.values.sorted { $0.key < $1.key }
        plan.transfers = transfers.values.map { transfer in
            // The units that move are the stored ones still standing once the plan is applied (a
            // refund in the same proof leaves none); a purchase new in this plan is the new owner's.
            var row = transfer
            for stored in storedTransactions.values where stored.familyKey == transfer.key {
                guard let final = transactions[stored.key], final.value.productType == .consumable,
                      final.value.productId == transfer.consumableProductId
                else { continue }
                if final.value.isRevoked { row.refundedUnits += final.value.quantity } else { row.consumableUnits += final.value.quantity }
            }
            return row
        }.sorted { $0.key < $1.key }
        plan.transactionInserts = inserted.values.sorted { $0.key < $1.key }
        plan.transactionUpdates = updated.values.sorted { $0.key < $1.key }
        plan.balanceDeltas = deltas
            .filter { $0.value.purchased != 0 || $0.value.refunded != 0 }
            .map { BalanceDelta(key: $0.key, purchased: $0.value.purchased, refunded: $0.value.refunded) }
            .sorted { $0.key < $1.key }
        return plan
    }
}

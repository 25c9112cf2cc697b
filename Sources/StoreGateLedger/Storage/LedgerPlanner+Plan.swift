import StoreGateCore

extension LedgerPlanner {
    /// Plans recording a prepared proof against the loaded rows.
    ///
    /// The first account to record a purchase family owns it; a family only notifications
    /// mentioned is claimed, with its transactions. A transaction or family owned by another
    /// account refuses the whole proof: nothing is written.
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
                    throw LedgerError(
                        .ownedByAnotherAccount,
                        reason: "the purchase belongs to another account",
                        transactionId: incoming.value.transactionId
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
        plan.rollupDeltas = Self.rollupDeltas(state: state, transactions: builder.transactions, plan: plan)
        EventPlanner.addEvents(
            to: &plan, state: state, cause: EventCause(recordedAt: prepared.proof.receivedAt, source: prepared.proof.kind.rawValue)
        )
        let ids = Set(prepared.transactions.map(\.key))
        let outcome = RecordOutcome(
            account: account,
            newTransactionIds: builder.inserted.keys.filter(ids.contains).sorted().map(\.transactionId),
            updatedTransactionIds: builder.updated.keys.filter { ids.contains($0) && builder.inserted[$0] == nil }.sorted().map(\.transactionId),
            unchangedTransactionIds: ids.filter { builder.inserted[$0] == nil && builder.updated[$0] == nil }.sorted().map(\.transactionId)
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
        plan.rollupDeltas = Self.rollupDeltas(state: state, transactions: builder.transactions, plan: plan)
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
    /// The rollup changes of a plan: for each family whose transactions or renewal info it
    /// writes, the family's contribution after the plan less its contribution before
    /// (``FamilyRollup``).
    ///
    /// - Parameters:
    ///   - state: The rows loaded before planning (every transaction of each touched family).
    ///   - transactions: The working view after the plan.
    ///   - plan: The plan's writes.
    package static func rollupDeltas(
        state: PlanningState, transactions: [TransactionKey: TransactionRow], plan: LedgerWritePlan
    ) -> [Rollup] {
        var touched = Set((plan.transactionInserts + plan.transactionUpdates).map(\.familyKey))
        for renewal in plan.renewals where state.renewals[renewal.key].map({ renewal.supersedes($0) }) ?? true {
            touched.insert(renewal.key)
        }
        guard !touched.isEmpty else { return [] }
        var before: [FamilyKey: [RecordedTransaction]] = [:]
        var after: [FamilyKey: [RecordedTransaction]] = [:]
        for row in state.transactions.values where touched.contains(row.familyKey) { before[row.familyKey, default: []].append(row.value) }
        for row in transactions.values where touched.contains(row.familyKey) { after[row.familyKey, default: []].append(row.value) }
        var deltas: [Rollup] = []
        for key in touched.sorted() {
            let oldRenewal = state.renewals[key]
            var newRenewal = oldRenewal
            for renewal in plan.renewals where renewal.key == key {
                if newRenewal.map({ renewal.supersedes($0) }) ?? true { newRenewal = renewal }
            }
            deltas += FamilyRollup.delta(
                from: FamilyRollup.contributions(before[key] ?? [], renewal: oldRenewal),
                to: FamilyRollup.contributions(after[key] ?? [], renewal: newRenewal)
            )
        }
        return Rollup.merged(deltas)
    }
}

/// Accumulates a plan while keeping the working view of the rows up to date.
private struct PlanBuilder {
    var families: [FamilyKey: FamilyRow]
    var transactions: [TransactionKey: TransactionRow]
    var familyInserts: [FamilyKey: FamilyRow] = [:]
    var familyClaims: [FamilyKey: FamilyRow] = [:]
    var inserted: [TransactionKey: TransactionRow] = [:]
    var updated: [TransactionKey: TransactionRow] = [:]
    var deltas: [BalanceKey: (purchased: Int, refunded: Int)] = [:]

    init(state: PlanningState) {
        families = state.families
        transactions = state.transactions
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

    private mutating func store(_ row: TransactionRow, replacing old: TransactionRow?) {
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

    func finish(proof: ProofRow) -> LedgerWritePlan {
        var plan = LedgerWritePlan(proof: proof)
        plan.familyInserts = familyInserts.values.sorted { $0.key < $1.key }
        plan.familyClaims = familyClaims.values.sorted { $0.key < $1.key }
        plan.transactionInserts = inserted.values.sorted { $0.key < $1.key }
        plan.transactionUpdates = updated.values.sorted { $0.key < $1.key }
        plan.balanceDeltas = deltas
            .filter { $0.value.purchased != 0 || $0.value.refunded != 0 }
            .map { BalanceDelta(key: $0.key, purchased: $0.value.purchased, refunded: $0.value.refunded) }
            .sorted { $0.key < $1.key }
        return plan
    }
}

package import StoreGateCore

extension FamilyRollup {
    /// What to add to the stored rollups when a family changes from `before` (with its renewal
    /// info `oldRenewal`) to `after` (with `newRenewal`): exactly
    /// `delta(from: contributions(before, renewal: oldRenewal), to: contributions(after, renewal: newRenewal))`,
    /// computed from what the two versions do not have in common.
    ///
    /// A write changes one transaction of a family or adds one, yet a subscription family with
    /// two years of monthly renewals contributes some 150 figures: computing both contributions
    /// in full made every renewal cost the whole family twice. Here
    /// - a transaction's own figures (revenue, unpriced, refunds) are counted again only when
    ///   one of the facts they read changed (``sameRollupFacts(_:_:)``), or it was added or
    ///   removed;
    /// - the periods' figures are walked on both sides, but emitted only from the period
    ///   before the first one the versions differ in (its end may depend on the next period),
    ///   and the churn only of the runs from that period's run on (a run's churn depends on
    ///   the run, and — for the last run — on the renewal info). Earlier figures are the same
    ///   on both sides: see ``walkPeriods(_:periods:renewal:from:emit:)``.
    ///
    /// A write that changes none of the facts rollups read (a re-observation, an owner,
    /// renewal info with the same verdict) changes nothing: no figures, no statements.
    ///
    /// - Parameter changed: When known, the ids of the only transactions that may differ
    ///   between the versions (a write's inserts and updates; every other transaction is the
    ///   same value on both sides): those are compared fact by fact, the others by id alone.
    ///   `nil` compares every transaction.
    /// - Precondition: transaction ids are unique within each version (the ledger's key is the
    ///   environment and the transaction id; a family lives in one environment).
    package static func change(
        from before: [RecordedTransaction], renewal oldRenewal: RenewalRow?,
        to after: [RecordedTransaction], renewal newRenewal: RenewalRow?, changed: [String]? = nil
    ) -> [Rollup] {
        // The figures as emitted, summed by key at the end: most writes emit one (a new
        // purchase's revenue), which needs no summing.
        var emitted: [Rollup] = []
        func subtract(_ key: RollupKey, _ value: RollupValue) {
            emitted.append(Rollup(key: key, value: RollupValue(count: 0 &- value.count, amount: 0 &- value.amount)))
        }
        func add(_ key: RollupKey, _ value: RollupValue) {
            emitted.append(Rollup(key: key, value: value))
        }

        // Whether two versions of a transaction agree on the facts the rollups read: by id alone
        // for one the write did not change (a renewal of a two-year subscription leaves some 25
        // transactions as they were, each compared twice below).
        func same(_ first: UnsafePointer<RecordedTransaction>, _ second: UnsafePointer<RecordedTransaction>) -> Bool {
            if let changed, first.pointee.transactionId == second.pointee.transactionId,
                !changed.contains(first.pointee.transactionId)
            {
                return true
            }
            return sameRollupFacts(first, second)
        }

        // Both versions in purchase order, as positions: no transaction is copied (a renewal
        // of a two-year subscription compares some 25 transactions on each side).
        let oldOrder = purchaseOrder(before)
        let newOrder = purchaseOrder(after)
        // Whether a transaction was added, removed or changed a fact the rollups read. The two
        // orders are merged: a transaction in both is in both at the same place in purchase
        // order, unless its purchase date changed — then it counts as removed and added, which
        // subtracts and adds exactly what changing it would.
        var changed = false
        before.withUnsafeBufferPointer { old in
            after.withUnsafeBufferPointer { new in
                var next = (old: 0, new: 0)
                while next.old < oldOrder.count || next.new < newOrder.count {
                    // Pointers, fields read in place: binding the two transactions copied them.
                    let first = next.old < oldOrder.count ? old.baseAddress! + oldOrder[next.old] : nil
                    let second = next.new < newOrder.count ? new.baseAddress! + newOrder[next.new] : nil
                    if let first, let second, first.pointee.purchaseDate == second.pointee.purchaseDate,
                        first.pointee.transactionId == second.pointee.transactionId
                    {
                        // In both versions: counted again only when a fact the rollups read changed.
                        next.old += 1
                        next.new += 1
                        guard !same(first, second) else { continue }
                        walkTransaction(first.pointee) { subtract($1, $2) }
                        walkTransaction(second.pointee) { add($1, $2) }
                    } else if let first, second.map({ inPurchaseOrder(first.pointee, $0.pointee) }) ?? true {
                        // Only in the old version (or moved in purchase order).
                        walkTransaction(first.pointee) { subtract($1, $2) }
                        next.old += 1
                    } else if let second {
                        walkTransaction(second.pointee) { add($1, $2) }
                        next.new += 1
                    }
                    changed = true
                }
            }
        }
        let sameRenewal = sameRollupFacts(oldRenewal, newRenewal)
        // The same transactions with the same facts: the periods are the same too, and only
        // renewal info that moves a churn verdict changes anything (a notification repeating
        // a renewal already recorded, the common second write of a renewal).
        guard changed || !sameRenewal else { return [] }

        let oldPeriods = periods(before, in: oldOrder)
        let newPeriods = periods(after, in: newOrder)
        let common = before.withUnsafeBufferPointer { old in
            after.withUnsafeBufferPointer { new in
                var common = 0
                while common < min(oldPeriods.count, newPeriods.count),
                    same(old.baseAddress! + oldPeriods[common], new.baseAddress! + newPeriods[common])
                {
                    common += 1
                }
                return common
            }
        }
        if common < oldPeriods.count || common < newPeriods.count || !sameRenewal {
            // The period before the first difference ends where its successor starts when it
            // was upgraded: it is counted again too. (Renewal info alone moves the last run's
            // churn: `common` is then every period, and the last one's run is walked again.)
            let first = max(common - 1, 0)
            walkPeriods(before, periods: oldPeriods, renewal: oldRenewal, from: first) { subtract($1, $2) }
            walkPeriods(after, periods: newPeriods, renewal: newRenewal, from: first) { add($1, $2) }
        }
        if emitted.count == 1, let only = emitted.first { return only.value.isZero ? [] : [only] }
        return Rollup.merged(emitted)
    }

    /// Whether two versions of a transaction agree on every fact ``FamilyRollup`` reads: its
    /// place in purchase order, the dimensions of its keys, and what it counts.
    package static func sameRollupFacts(_ first: RecordedTransaction, _ second: RecordedTransaction) -> Bool {
        withUnsafePointer(to: first) { first in withUnsafePointer(to: second) { second in sameRollupFacts(first, second) } }
    }

    /// `sameRollupFacts(_:_:)` on two transactions
    /// read in place: ``change(from:renewal:to:renewal:)`` compares every transaction and period
    /// of both versions, and an element of a buffer passed by value was copied (a dozen strings
    /// retained and released) for each comparison.
    static func sameRollupFacts(_ first: UnsafePointer<RecordedTransaction>, _ second: UnsafePointer<RecordedTransaction>) -> Bool {
        first.pointee.transactionId == second.pointee.transactionId && first.pointee.purchaseDate == second.pointee.purchaseDate
            && first.pointee.expiresDate == second.pointee.expiresDate && first.pointee.revocationDate == second.pointee.revocationDate
            && first.pointee.isUpgraded == second.pointee.isUpgraded && first.pointee.quantity == second.pointee.quantity
            && first.pointee.productType == second.pointee.productType && first.pointee.money == second.pointee.money
            && first.pointee.environment == second.pointee.environment && first.pointee.productId == second.pointee.productId
            && first.pointee.subscriptionGroup == second.pointee.subscriptionGroup
    }

    /// Whether two renewal infos give every run the same churn reason (``FamilyRollup``'s
    /// rules read only these three facts, and whether there is renewal info at all).
    package static func sameRollupFacts(_ first: RenewalRow?, _ second: RenewalRow?) -> Bool {
        switch (first, second) {
        case (nil, nil): true
        case (let first?, let second?):
            first.isInBillingRetryPeriod == second.isInBillingRetryPeriod && first.expirationIntent == second.expirationIntent
                && first.willAutoRenew == second.willAutoRenew
        default: false
        }
    }
}

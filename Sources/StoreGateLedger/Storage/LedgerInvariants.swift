/// The ledger's invariants, checked the same way for every backend from figures each one
/// aggregates from its store.
package struct LedgerInvariants: Sendable {
    /// Transactions whose account is not their family's owner (or whose family is missing).
    package var ownershipMismatches = 0
    /// Purchased and refunded units implied by the owned consumable transactions.
    package var expected: [BalanceKey: (purchased: Int, refunded: Int)] = [:]
    /// The stored counters.
    package var stored: [BalanceKey: ConsumableBalance] = [:]
    /// Consumed units implied by the recorded consumptions (and the moves of purchases, which
    /// take the old owner's used units of a consumable along).
    package var consumed: [BalanceKey: Int] = [:]
    /// Refunded units that left an account with a purchase moved to another one: the account
    /// bought them, and may have used them before the refund.
    package var refundedMovedOut: [BalanceKey: Int] = [:]

    package init() {}

    /// What is wrong, in stable order; empty when every invariant holds.
    package var problems: [String] {
        var problems: [String] = []
        if ownershipMismatches > 0 {
            problems.append("\(ownershipMismatches) transaction(s) are not owned by their family's owner")
        }
        var mismatched = 0
        var overConsumed = 0
        for key in Set(expected.keys).union(stored.keys).union(consumed.keys) {
            let balance = stored[key] ?? ConsumableBalance(productId: key.productId, purchased: 0, refunded: 0, consumed: 0)
            let wanted = expected[key] ?? (0, 0)
            if balance.purchased != wanted.purchased || balance.refunded != wanted.refunded || balance.consumed != (consumed[key] ?? 0) {
                mismatched += 1
            }
            if balance.consumed > balance.purchased + balance.refunded + (refundedMovedOut[key] ?? 0) || balance.consumed < 0 {
                overConsumed += 1
            }
        }
        if mismatched > 0 {
            problems.append("\(mismatched) consumable balance(s) do not match their transactions and consumptions")
        }
        if overConsumed > 0 {
            problems.append("\(overConsumed) consumable balance(s) show more units consumed than were ever bought")
        }
        return problems
    }

    /// Adds one move of a purchase: the consumed units that went along, and its refunded units.
    package mutating func addTransfer(from: AccountID, to: AccountID, productId: String, consumedMoved: Int, refundedUnits: Int) {
        if consumedMoved != 0 {
            consumed[BalanceKey(account: from, productId: productId), default: 0] -= consumedMoved
            consumed[BalanceKey(account: to, productId: productId), default: 0] += consumedMoved
        }
        if refundedUnits != 0 { refundedMovedOut[BalanceKey(account: from, productId: productId), default: 0] += refundedUnits }
    }
}

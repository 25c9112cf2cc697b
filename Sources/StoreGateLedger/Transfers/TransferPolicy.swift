/// What the ledger does when an account presents a purchase another account owns.
///
/// A purchase family (environment + original transaction id) belongs to the first account that
/// recorded it. When another account later presents a proof of it — a restore on a device
/// signed in to another account, a shared Apple ID, a replayed receipt — the ledger either:
///
/// - ``refuse``s (the default): nothing of the proof is written, the call fails with
///   ``LedgerError/Code/ownedByAnotherAccount`` and the presenting account gets a
///   `proof.refused` event. The purchase stays where it is.
/// - ``transfer``s: the whole family (every transaction, its renewals, its consumable units)
///   moves to the presenting account in the same database transaction as the rest of the
///   proof, with a ``LedgerEvent/EventType/purchaseTransferred`` event on each account: `out`
///   on the old one (no longer entitled through it), `in` on the new one.
///
/// Either way, a family holding a transaction bound to an `appAccountToken` never moves to an
/// account whose token differs (``AppAccountTokenPolicy``): that stays a refusal, because it is
/// how an attacker holding someone else's receipt would take their purchase. Support can move a
/// family by hand under either policy (``Ledger/transfer(_:)``); the token rule holds there too.
///
/// `docs/transfers.md` weighs the two policies (shared Apple IDs, Family Sharing, what hosted
/// platforms do).
public enum TransferPolicy: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Another account's proof of an owned purchase is refused (HTTP 409).
    case refuse
    /// Another account's proof of an owned purchase moves the purchase to it.
    case transfer

    public var description: String { rawValue }
}

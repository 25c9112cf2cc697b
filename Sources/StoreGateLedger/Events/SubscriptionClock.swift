package import Foundation
import StoreGateCore

/// The subscription state changes that time alone makes: a period ends (`active` →
/// `expired`, `inGracePeriod` or `inBillingRetry`), a grace period ends (`inGracePeriod` →
/// `inBillingRetry`). No write happens at those moments, so the ledger keeps, per owned
/// family, the next moment one may happen (``FamilyRow/nextTransitionAt``: the earliest
/// `expiresDate` or grace period end still ahead) and appends the
/// ``LedgerEvent/EventType/subscriptionStateChanged`` events once it has passed:
///
/// - every write to a family first appends the transitions due before it (``EventPlanner``),
///   so a family's events stay in the order things happened;
/// - ``Ledger/emitElapsedTransitions(until:limit:)``, run every few seconds by the service,
///   appends them for the families nobody writes to.
///
/// Each such event has `source` ``LedgerEvent/timeSource``, `occurredAt` the boundary, and the
/// state at the boundary. Pure and shared by every backend, like the planner.
package enum SubscriptionClock {
    /// The events of `family` for every boundary in `[family.nextTransitionAt, date]`, and the
    /// family's next boundary after `date`.
    package static func transitions(
        of family: FamilyRow, rows: [TransactionRow], renewal: RenewalRow?, until date: Date
    ) -> (events: [LedgerEvent], next: Date?) {
        let date = date.ledgerNormalized
        guard let owner = family.account else { return ([], nil) }
        let events = FamilyEvents(
            family: family.key, owner: owner, cause: EventCause(recordedAt: date, source: LedgerEvent.timeSource),
            before: [], changed: [], unchanged: rows, renewalBefore: renewal, renewalIncoming: nil
        )
        guard let due = family.nextTransitionAt, due <= date else { return ([], events.nextBoundary(after: date)) }
        return events.elapsed(from: due, through: date)
    }

    /// The transitions of the `due` families, whose rows `state` holds, in `due` order, and
    /// each family's next moment: the batch every backend's
    /// ``Ledger/emitElapsedTransitions(until:limit:)`` writes in one transaction.
    package static func transitions(
        of due: [FamilyKey], in state: PlanningState, until date: Date
    ) -> (events: [LedgerEvent], next: [NextTransition]) {
        let rowsByFamily = Dictionary(grouping: state.transactions.values, by: \.familyKey)
        var events: [LedgerEvent] = []
        var next: [NextTransition] = []
        for key in due {
            guard let family = state.families[key] else { continue }
            let (appended, moment) = transitions(of: family, rows: rowsByFamily[key] ?? [], renewal: state.renewals[key], until: date)
            events += appended
            next.append(NextTransition(key: key, at: moment))
        }
        return (events, next)
    }

    /// How many families ``Ledger/emitElapsedTransitions(until:limit:)`` takes at most per call.
    package static func checkLimit(_ limit: Int) throws(LedgerError) {
        guard (1...10_000).contains(limit) else {
            throw LedgerError(.invalidArgument, reason: "the clock takes 1...10000 families per call, got \(limit)")
        }
    }
}

extension LedgerEvent {
    /// ``source`` of a change time alone made (`SubscriptionClock`).
    public static let timeSource = "time"
}

extension FamilyEvents {
    /// The earliest moment after `date` at which time may change the owner's subscription
    /// state: the end of an auto-renewable period that stands (not revoked or upgraded), or the
    /// renewal info's grace period end. (A boundary where nothing changes costs a look and
    /// emits nothing.)
    func nextBoundary(after date: Date) -> Date? {
        var next: Date?
        func consider(_ candidate: Date?) {
            guard let candidate, candidate > date else { return }
            if let current = next, current <= candidate { return }
            next = candidate
        }
        var hasSubscription = false
        for row in after where row.value.productType == .autoRenewable {
            hasSubscription = true
            // A refunded, revoked or upgraded period is never active: its end changes nothing.
            if !row.value.isRevoked, !row.value.isUpgraded { consider(row.value.expiresDate) }
        }
        if hasSubscription { consider(renewalAfter?.gracePeriodExpiresDate) }
        return next
    }

    /// The state changes at each boundary in `[first, end]` (the family's rows do not change
    /// in between), and the first boundary after `end`.
    func elapsed(from first: Date, through end: Date) -> (events: [LedgerEvent], next: Date?) {
        var events: [LedgerEvent] = []
        var previous = subscriptionState(after, renewalAfter, at: first.addingTimeInterval(-0.001))
        var boundary: Date? = first
        while let moment = boundary, moment <= end {
            let current = subscriptionState(after, renewalAfter, at: moment)
            if let current, let before = previous, before.state != current.state, let anchor = after.last {
                var change = event(.subscriptionStateChanged, anchor, occurredAt: moment, stateAfter: current)
                change.previousState = before.state
                change.productId = current.productId
                change.transactionId = current.decidingTransactionId
                events.append(change)
            }
            previous = current
            boundary = nextBoundary(after: moment)
        }
        return (events, boundary)
    }
}

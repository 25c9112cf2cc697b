package import Foundation

/// Derives `entitlement.changed` events: an account's entitlements now against what was last
/// announced. Pure and shared by every backend.
package enum EntitlementChanges {
    /// The account's new snapshot and the events of what changed since `before`.
    ///
    /// - Parameters:
    ///   - account: The account.
    ///   - before: What was last announced (`nil`: nothing yet).
    ///   - resolved: The account's entitlements now (``EntitlementResolver``).
    ///   - date: Now; the events' recording time.
    ///   - source: What caused the look (the latest fact's source, or `time`).
    package static func derive(
        account: AccountID, before: EntitlementSnapshot?, resolved: [Entitlement], at date: Date, source: String
    ) -> (snapshot: EntitlementSnapshot, events: [LedgerEvent]) {
        var snapshot = EntitlementSnapshot()
        var events: [LedgerEvent] = []
        for entitlement in resolved {
            let item = EntitlementSnapshot.Item(entitlement)
            snapshot.items[entitlement.identifier] = item
            if entitlement.isActive, let end = entitlement.expiresAt, end > date {
                snapshot.nextCheckAt = min(snapshot.nextCheckAt ?? end, end)
            }
            let previous = before?.items[entitlement.identifier]
            // Never announced and never unlocked: nothing to say.
            if previous == nil, !item.isActive, entitlement.source == nil { continue }
            if let previous, !previous.differs(from: item) { continue }
            // An entitlement that ran out by time says when it did.
            var occurredAt = date.ledgerNormalized
            if let previous, previous.isActive, !item.isActive, let end = previous.expiresAt, end <= date { occurredAt = end }
            events.append(LedgerEvent(
                id: EventPlanner.newID(), sequence: 0, type: .entitlementChanged, account: account, productId: entitlement.identifier,
                environment: entitlement.source?.environment, transactionId: entitlement.source?.transactionId,
                originalTransactionId: entitlement.source?.originalTransactionId, occurredAt: occurredAt, recordedAt: date.ledgerNormalized,
                source: source, entitlement: nil, change: LedgerEvent.Change(entitlement: entitlement.identifier, before: previous, after: item)
            ))
        }
        return (snapshot, events)
    }
}

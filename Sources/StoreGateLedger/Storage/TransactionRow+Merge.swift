import Foundation
import StoreGateCore

/// The order of observations of one transaction: the latest signing date wins; observations
/// signed in the same millisecond are ordered by their content (revoked after not revoked,
/// then upgraded, later expiry, source, proof digest), so the outcome never depends on the
/// order they were delivered in.
package struct ObservationVersion: Comparable, Sendable {
    var observedAt: Int64
    var isRevoked: Int
    var revocationDate: Int64
    var revocationReason: Int
    var isUpgraded: Int
    var expiresDate: Int64
    var source: String
    var digest: String

    package static func < (lhs: ObservationVersion, rhs: ObservationVersion) -> Bool {
        if lhs.observedAt != rhs.observedAt { return lhs.observedAt < rhs.observedAt }
        if lhs.isRevoked != rhs.isRevoked { return lhs.isRevoked < rhs.isRevoked }
        if lhs.revocationDate != rhs.revocationDate { return lhs.revocationDate < rhs.revocationDate }
        if lhs.revocationReason != rhs.revocationReason { return lhs.revocationReason < rhs.revocationReason }
        if lhs.isUpgraded != rhs.isUpgraded { return lhs.isUpgraded < rhs.isUpgraded }
        if lhs.expiresDate != rhs.expiresDate { return lhs.expiresDate < rhs.expiresDate }
        if lhs.source != rhs.source { return lhs.source < rhs.source }
        return lhs.digest < rhs.digest
    }
}

extension TransactionRow {
    /// This row's observation order.
    package var version: ObservationVersion {
        ObservationVersion(
            observedAt: value.observedAt.ledgerMilliseconds,
            isRevoked: value.revocationDate == nil ? 0 : 1,
            revocationDate: value.revocationDate?.ledgerMilliseconds ?? -1,
            revocationReason: value.revocationReason ?? -1,
            isUpgraded: value.isUpgraded ? 1 : 0,
            expiresDate: value.expiresDate?.ledgerMilliseconds ?? -1,
            source: value.source.rawValue,
            digest: value.proofDigest?.description ?? ""
        )
    }

    /// This row after taking another observation of the same transaction.
    ///
    /// Facts that never change (product, dates of purchase, token, money facts) are filled in when missing;
    /// Apple's stated type and group replace the catalog's; the mutable facts (expiry,
    /// revocation, upgrade) come from whichever observation is later by ``version``. The
    /// merge is commutative and associative, so any delivery order gives the same row.
    package func merged(with incoming: TransactionRow) -> TransactionRow {
        var result = self
        if !hasAppleMetadata && incoming.hasAppleMetadata {
            result.hasAppleMetadata = true
            result.value.productType = incoming.value.productType
            result.value.subscriptionGroup = incoming.value.subscriptionGroup
        }
        if result.value.appAccountToken == nil { result.value.appAccountToken = incoming.value.appAccountToken }
        if result.value.originalPurchaseDate == nil { result.value.originalPurchaseDate = incoming.value.originalPurchaseDate }
        if result.value.webOrderLineItemId == nil { result.value.webOrderLineItemId = incoming.value.webOrderLineItemId }
        // Money facts never change for a transaction: the first signed observation fills them.
        // Two that disagree (they should not) resolve to the later one, like the mutable facts,
        // so the merge stays commutative.
        if let money = incoming.value.money, result.value.money != money, result.value.money == nil || incoming.version > version {
            result.value.money = money
        }
        if incoming.version > version {
            result.value.expiresDate = incoming.value.expiresDate
            result.value.revocationDate = incoming.value.revocationDate
            result.value.revocationReason = incoming.value.revocationReason
            result.value.isUpgraded = incoming.value.isUpgraded
            result.value.observedAt = incoming.value.observedAt
            result.value.source = incoming.value.source
            result.value.proofDigest = incoming.value.proofDigest
        }
        return result
    }

    /// What this row adds to its owner's consumable counters (none unless it is an owned
    /// consumable).
    package var balanceContribution: BalanceDelta? {
        guard let account = value.account, value.productType == .consumable else { return nil }
        let units = value.quantity
        return BalanceDelta(
            key: BalanceKey(account: account, productId: value.productId),
            purchased: value.isRevoked ? 0 : units,
            refunded: value.isRevoked ? units : 0
        )
    }
}

public import Foundation
public import StoreGateCore

/// Identifies a purchase family: every transaction sharing an original transaction id.
package struct FamilyKey: Hashable, Sendable, Comparable {
    package var environment: AppStoreEnvironment
    package var originalTransactionId: String

    package init(environment: AppStoreEnvironment, originalTransactionId: String) {
        self.environment = environment
        self.originalTransactionId = originalTransactionId
    }

    package static func < (lhs: FamilyKey, rhs: FamilyKey) -> Bool {
        (lhs.environment.rawValue, lhs.originalTransactionId) < (rhs.environment.rawValue, rhs.originalTransactionId)
    }
}

/// Identifies a transaction: idempotency is by (environment, transaction id).
package struct TransactionKey: Hashable, Sendable, Comparable {
    package var environment: AppStoreEnvironment
    package var transactionId: String

    package init(environment: AppStoreEnvironment, transactionId: String) {
        self.environment = environment
        self.transactionId = transactionId
    }

    package static func < (lhs: TransactionKey, rhs: TransactionKey) -> Bool {
        (lhs.environment.rawValue, lhs.transactionId) < (rhs.environment.rawValue, rhs.transactionId)
    }
}

/// A purchase family and the account that owns it (`nil` while only notifications mention it).
package struct FamilyRow: Hashable, Sendable {
    package var key: FamilyKey
    package var account: AccountID?
    /// The next moment at which time alone may change the owned family's subscription state
    /// (an `expiresDate`, a grace period's end) and no event has said so yet; `nil` when none
    /// lies ahead (``SubscriptionClock``).
    package var nextTransitionAt: Date?

    package init(key: FamilyKey, account: AccountID?, nextTransitionAt: Date? = nil) {
        self.key = key
        self.account = account
        self.nextTransitionAt = nextTransitionAt
    }
}

/// A stored transaction: its public state plus whether Apple stated its type and group.
package struct TransactionRow: Hashable, Sendable {
    package var value: RecordedTransaction
    /// Whether the type and subscription group came from a signed transaction (else the catalog).
    package var hasAppleMetadata: Bool

    package init(value: RecordedTransaction, hasAppleMetadata: Bool) {
        self.value = value
        self.hasAppleMetadata = hasAppleMetadata
    }

    package var key: TransactionKey {
        TransactionKey(environment: value.environment, transactionId: value.transactionId)
    }

    package var familyKey: FamilyKey {
        FamilyKey(environment: value.environment, originalTransactionId: value.originalTransactionId)
    }
}

/// The latest renewal info of one purchase family.
package struct RenewalRow: Hashable, Sendable {
    package var key: FamilyKey
    package var productId: String
    package var autoRenewProductId: String?
    package var willAutoRenew: Bool
    package var expirationIntent: Int?
    package var isInBillingRetryPeriod: Bool
    package var gracePeriodExpiresDate: Date?
    package var renewalDate: Date?
    /// The signing date of the observation (the renewal info's, or its notification's).
    package var observedAt: Date

    package init(
        key: FamilyKey, productId: String, autoRenewProductId: String?, willAutoRenew: Bool,
        expirationIntent: Int?, isInBillingRetryPeriod: Bool, gracePeriodExpiresDate: Date?,
        renewalDate: Date?, observedAt: Date
    ) {
        self.key = key
        self.productId = productId
        self.autoRenewProductId = autoRenewProductId
        self.willAutoRenew = willAutoRenew
        self.expirationIntent = expirationIntent
        self.isInBillingRetryPeriod = isInBillingRetryPeriod
        self.gracePeriodExpiresDate = gracePeriodExpiresDate
        self.renewalDate = renewalDate
        self.observedAt = observedAt
    }

    /// A canonical text of every field but the date: breaks ties between observations signed
    /// in the same millisecond, so the winner never depends on delivery order.
    package var tiebreak: String {
        [
            productId, autoRenewProductId ?? "", willAutoRenew ? "1" : "0",
            expirationIntent.map(String.init) ?? "", isInBillingRetryPeriod ? "1" : "0",
            gracePeriodExpiresDate.map { String($0.ledgerMilliseconds) } ?? "",
            renewalDate.map { String($0.ledgerMilliseconds) } ?? "",
        ].joined(separator: "|")
    }

    /// Whether this observation replaces `other`: later signing date, then the tiebreak.
    package func supersedes(_ other: RenewalRow) -> Bool {
        let mine = observedAt.ledgerMilliseconds, theirs = other.observedAt.ledgerMilliseconds
        if mine != theirs { return mine > theirs }
        // Byte order, as SQLite's BINARY and PostgreSQL's "C" collations compare.
        return other.tiebreak.utf8.lexicographicallyPrecedes(tiebreak.utf8)
    }
}

/// A stored notification.
package struct NotificationRow: Hashable, Sendable {
    package var summary: RecordedNotification
    package var proofDigest: ProofDigest

    package init(summary: RecordedNotification, proofDigest: ProofDigest) {
        self.summary = summary
        self.proofDigest = proofDigest
    }
}

/// A stored proof: its digest, and the proof sealed when encryption is configured.
package struct ProofRow: Hashable, Sendable {
    package var digest: ProofDigest
    package var kind: ProofKind
    package var environment: AppStoreEnvironment
    package var sealed: SealedProof?
    package var receivedAt: Date

    package init(digest: ProofDigest, kind: ProofKind, environment: AppStoreEnvironment, sealed: SealedProof?, receivedAt: Date) {
        self.digest = digest
        self.kind = kind
        self.environment = environment
        self.sealed = sealed
        self.receivedAt = receivedAt
    }
}

/// The consumable counters of one account and product.
package struct BalanceKey: Hashable, Sendable, Comparable {
    package var account: AccountID
    package var productId: String

    package init(account: AccountID, productId: String) {
        self.account = account
        self.productId = productId
    }

    package static func < (lhs: BalanceKey, rhs: BalanceKey) -> Bool {
        (lhs.account.rawValue, lhs.productId) < (rhs.account.rawValue, rhs.productId)
    }
}

/// A change to the purchased and refunded counters of one balance.
package struct BalanceDelta: Hashable, Sendable {
    package var key: BalanceKey
    package var purchased: Int
    package var refunded: Int
}

/// A recorded consumption, kept by idempotency key.
package struct ConsumptionRow: Hashable, Sendable {
    package var account: AccountID
    package var idempotencyKey: String
    package var productId: String
    package var quantity: Int
    package var consumedAt: Date
    package var remaining: Int

    package init(account: AccountID, idempotencyKey: String, productId: String, quantity: Int, consumedAt: Date, remaining: Int) {
        self.account = account
        self.idempotencyKey = idempotencyKey
        self.productId = productId
        self.quantity = quantity
        self.consumedAt = consumedAt
        self.remaining = remaining
    }

    package func receipt(isReplay: Bool) -> ConsumptionReceipt {
        ConsumptionReceipt(
            account: account, productId: productId, quantity: quantity, idempotencyKey: idempotencyKey,
            consumedAt: consumedAt, remaining: remaining, isReplay: isReplay
        )
    }
}

/// One move of a purchase family between accounts, as a plan writes it (`ledger_transfers`).
///
/// The family's rows and their purchased and refunded counters move with the plan's other
/// writes (an owner change, transaction updates, balance deltas). What the counters alone
/// cannot say is which of the old owner's consumed units were units of this purchase: the
/// backend decides that inside the write, from the stored balance after the deltas
/// (``consumedUnitsMoving(_:after:)``), and stores the answer in the row.
package struct TransferRow: Hashable, Sendable {
    package var id: String
    package var key: FamilyKey
    package var from: AccountID
    package var to: AccountID
    /// When it was recorded.
    package var transferredAt: Date
    /// A ``ProofKind`` raw value (a restore), or ``LedgerEvent/transferSource`` (support).
    package var source: String
    /// Support's move: the API key's name.
    package var actor: String?
    /// Support's move: why.
    package var reason: String?
    /// The consumable product of the family's standing (not revoked) units, when it has some.
    package var consumableProductId: String?
    /// Those units (0 when none).
    package var consumableUnits: Int
    /// The family's refunded (revoked) units of that product, which leave with it: the old
    /// owner may have used them before the refund, and that use (its refund debt) stays its own.
    package var refundedUnits: Int = 0
    /// The units of the old owner's consumption that went with the purchase (set by the backend).
    package var consumedMoved: Int = 0

    package init(
        id: String, key: FamilyKey, from: AccountID, to: AccountID, transferredAt: Date, source: String, actor: String?, reason: String?,
        consumableProductId: String?, consumableUnits: Int
    ) {
        self.id = id
        self.key = key
        self.from = from
        self.to = to
        self.transferredAt = transferredAt
        self.source = source
        self.actor = actor
        self.reason = reason
        self.consumableProductId = consumableProductId
        self.consumableUnits = consumableUnits
    }

    /// The old owner's consumed units that leave with `units` standing units of a consumable,
    /// given the old owner's balance after the move's deltas (its purchased counter already
    /// without them): what its remaining purchases no longer cover, at most `units`.
    ///
    /// The old owner is taken to have used its other purchases first, so the new owner
    /// receives whatever of the purchase the old owner could still have spent — and never a
    /// unit the old owner already used (the units spendable on both accounts together never
    /// grow). The old owner keeps no debt from the move; a refund debt it had stays its own.
    package static func consumedUnitsMoving(_ units: Int, after balance: ConsumableBalance) -> Int {
        max(0, min(units, balance.consumed - balance.purchased))
    }
}

public import Foundation
public import StoreGateCore

/// One change the ledger made, as its outbox keeps it.
///
/// The ledger appends events in the same database transaction as the change they describe:
/// a change is never stored without its events, nor an event without its change. Events are
/// read in ``sequence`` order with ``Ledger/events(after:limit:)``; the sequence is the
/// commit order of the changes on every backend, so a reader that remembers the last
/// sequence it saw never misses one and sees each account's changes in the order they
/// happened.
///
/// An event states the fact (``type``, the transaction, what caused it) and the
/// ``entitlement`` right after it, so a receiver can act on one event without asking back.
public struct LedgerEvent: Sendable, Hashable {
    /// What happened.
    public struct EventType: RawRepresentable, Sendable, Hashable, Comparable, CustomStringConvertible {
        public let rawValue: String

        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        public var description: String { rawValue }

        public static func < (lhs: EventType, rhs: EventType) -> Bool { lhs.rawValue < rhs.rawValue }

        /// The account gained a purchase: a non-consumable, a non-renewing subscription, or
        /// the original transaction of an auto-renewable family (a family claimed from
        /// notifications counts as gained when its proof is recorded).
        ///
        /// Every transaction gets the same events whatever order its facts arrive in: a
        /// purchase whose refund the ledger learnt first is `purchase.recorded` followed by
        /// ``transactionRevoked``, as when the refund comes later.
        public static let purchaseRecorded = EventType(rawValue: "purchase.recorded")
        /// A later transaction of an auto-renewable family (its transaction id is not the
        /// family's original one): a renewal, a resubscription, or a switch to another product
        /// of the group.
        public static let subscriptionRenewed = EventType(rawValue: "subscription.renewed")
        /// The customer upgraded away from this transaction's product to another of its group:
        /// the event's product stopped (its transaction is superseded); the family goes on
        /// with the product in ``LedgerEvent/entitlement``.
        public static let subscriptionUpgraded = EventType(rawValue: "subscription.upgraded")
        /// A subscription family moved between ``SubscriptionEntitlement/State`` values (active,
        /// grace period, billing retry, expired, revoked, upgraded); ``LedgerEvent/previousState``
        /// says from where. A period or grace period that ends is one too, with
        /// ``LedgerEvent/source`` ``LedgerEvent/timeSource`` and the moment it ended as
        /// ``LedgerEvent/occurredAt`` (``Ledger/emitElapsedTransitions(until:limit:)``).
        public static let subscriptionStateChanged = EventType(rawValue: "subscription.state_changed")
        /// The customer turned auto-renew off.
        public static let autoRenewDisabled = EventType(rawValue: "subscription.auto_renew_disabled")
        /// The customer turned auto-renew back on.
        public static let autoRenewEnabled = EventType(rawValue: "subscription.auto_renew_enabled")
        /// The product the subscription renews into changed (a scheduled upgrade, downgrade
        /// or crossgrade).
        public static let renewalProductChanged = EventType(rawValue: "subscription.renewal_product_changed")
        /// Apple refunded or revoked a transaction.
        public static let transactionRevoked = EventType(rawValue: "transaction.revoked")
        /// Apple reversed a refund (`REFUND_REVERSED`): the transaction stands again.
        public static let transactionReinstated = EventType(rawValue: "transaction.reinstated")
        /// Units of a consumable were bought: the balance grew.
        public static let consumableCredited = EventType(rawValue: "consumable.credited")
        /// Units of a consumable were consumed.
        public static let consumableConsumed = EventType(rawValue: "consumable.consumed")
        /// A proof was refused because its purchase belongs to another account (receipt
        /// sharing, a replay); nothing else was written.
        public static let proofRefused = EventType(rawValue: "proof.refused")
        /// Support or a backend granted an entitlement (``LedgerEvent/grant``; the event's
        /// ``LedgerEvent/productId`` is the entitlement's identifier).
        public static let grantCreated = EventType(rawValue: "grant.created")
        /// A grant was revoked before its end.
        public static let grantRevoked = EventType(rawValue: "grant.revoked")
        /// A grant reached its end (source `time`: the subscription clock appends it).
        public static let grantExpired = EventType(rawValue: "grant.expired")
        /// A purchase family moved between accounts (``LedgerEvent/transfer``): a restore by
        /// another account under ``TransferPolicy/transfer``, or support's move
        /// (``Ledger/transfer(_:)``). Two events, one per account, in the same transaction:
        /// ``LedgerEvent/Transfer/Direction/outgoing`` on the old owner, whose
        /// ``LedgerEvent/entitlement`` says it is no longer entitled through the family (for a
        /// consumable: its balance without the units that left), and
        /// ``LedgerEvent/Transfer/Direction/incoming`` on the new owner, with what it holds
        /// now. A receiver revokes on `out` and grants on `in`. A move is a fact about the
        /// family, not about one of its transactions: both name the family
        /// (``LedgerEvent/originalTransactionId``) and no ``LedgerEvent/transactionId``, whichever
        /// transaction was presented, so each transaction's events stay the same whatever order
        /// its facts arrived in; the facts keep their own events (the family's purchase stays one
        /// `purchase.recorded`, on the account that first recorded it).
        public static let purchaseTransferred = EventType(rawValue: "purchase.transferred")
        /// One of the catalog's entitlements flipped or its end moved for the account
        /// (``LedgerEvent/change`` says from what to what; the event's
        /// ``LedgerEvent/productId`` is the entitlement's identifier). Appended after the
        /// facts that caused it by the entitlement tracker, once per change; replaying these
        /// alone gives each account's entitlements.
        public static let entitlementChanged = EventType(rawValue: "entitlement.changed")
        /// Support moved a subscription's renewal date at Apple (``LedgerEvent/support`` says
        /// who, why and by how much); the new expiry reaches the ledger with Apple's answer.
        public static let subscriptionExtended = EventType(rawValue: "subscription.extended")

        /// Every type this version emits.
        public static let all: [EventType] = [
            .purchaseRecorded, .subscriptionRenewed, .subscriptionUpgraded, .subscriptionStateChanged, .autoRenewDisabled, .autoRenewEnabled,
            .renewalProductChanged, .transactionRevoked, .transactionReinstated, .consumableCredited,
            .consumableConsumed, .proofRefused, .grantCreated, .grantRevoked, .grantExpired, .purchaseTransferred,
            .entitlementChanged, .subscriptionExtended,
        ]
    }

    /// What the account holds of the event's product right after it.
    ///
    /// Subscriptions: the state of the purchase family (Apple's original transaction id) at
    /// the time of recording. Non-consumables and non-renewing subscriptions: whether a
    /// transaction of the family still stands. Consumables: the account's balance.
    public struct Entitlement: Sendable, Hashable {
        /// The product's type as recorded.
        public var productType: ProductType
        /// Whether the account is entitled to the product after the change.
        public var isEntitled: Bool
        /// Subscriptions: where the family stands.
        public var state: SubscriptionEntitlement.State?
        /// Subscriptions: the product of the deciding transaction.
        public var productId: String?
        /// Subscriptions: the end of the deciding period.
        public var expiresDate: Date?
        /// Subscriptions: from the latest renewal info.
        public var willAutoRenew: Bool?
        /// Subscriptions: the product it renews into.
        public var autoRenewProductId: String?
        /// Consumables: the balance.
        public var balance: ConsumableBalance?

        public init(
            productType: ProductType, isEntitled: Bool, state: SubscriptionEntitlement.State? = nil, productId: String? = nil,
            expiresDate: Date? = nil, willAutoRenew: Bool? = nil, autoRenewProductId: String? = nil, balance: ConsumableBalance? = nil
        ) {
            self.productType = productType
            self.isEntitled = isEntitled
            self.state = state
            self.productId = productId
            self.expiresDate = expiresDate
            self.willAutoRenew = willAutoRenew
            self.autoRenewProductId = autoRenewProductId
            self.balance = balance
        }
    }

    /// A stable, unique id (a lowercase UUID): the receiver's idempotency key.
    public var id: String
    /// The position in the stream: strictly increasing in commit order (0 until stored).
    public var sequence: Int64
    /// What happened.
    public var type: EventType
    /// The account concerned.
    public var account: AccountID
    /// The product concerned.
    public var productId: String
    /// The environment of the transaction (`nil` for a consumption).
    public var environment: AppStoreEnvironment?
    /// The transaction concerned, when one is.
    public var transactionId: String?
    /// Its purchase family.
    public var originalTransactionId: String?
    /// When it happened by Apple's account (purchase, revocation or signing date), or the
    /// ledger's clock when Apple states no time (a consumption, a state computed at recording).
    public var occurredAt: Date
    /// When the ledger recorded it.
    public var recordedAt: Date
    /// What the change came from: a `ProofKind` raw value, `consumption`
    /// (``consumptionSource``), or `time` (``timeSource``: a period or grace period ended).
    public var source: String
    /// The notification that caused it, when one did.
    public var notificationType: String?
    public var notificationSubtype: String?
    public var notificationUUID: String?
    /// ``EventType/subscriptionStateChanged``: the state before.
    public var previousState: SubscriptionEntitlement.State?
    /// ``EventType/transactionRevoked``: Apple's revocation reason.
    public var revocationReason: Int?
    /// Units bought or consumed.
    public var quantity: Int?
    /// ``EventType/consumableConsumed``: the caller's idempotency key.
    public var idempotencyKey: String?
    /// ``EventType/proofRefused``: the ledger's error code.
    public var refusal: String?
    /// The entitlement right after the change (`nil` for a refusal and a grant's events).
    public var entitlement: Entitlement?
    /// A grant's events: the grant.
    public var grant: Grant?
    /// ``EventType/purchaseTransferred``: the move.
    public var transfer: Transfer?

    /// The move a `purchase.transferred` event is about.
    public struct Transfer: Sendable, Hashable {
        /// Which side of the move the event's account is on.
        public enum Direction: String, Sendable, Hashable {
            /// The purchase left the account: revoke what it unlocked.
            case outgoing = "out"
            /// The purchase came to the account: grant what it unlocks.
            case incoming = "in"
        }

        /// The move's id: the same on both events.
        public var id: String
        /// `out` on the old owner, `in` on the new one.
        public var direction: Direction
        /// The account the family left.
        public var from: AccountID
        /// The account the family moved to.
        public var to: AccountID
        /// Support's move: the API key's name; `nil` for a restore.
        public var actor: String?
        /// Support's move: why; `nil` for a restore.
        public var reason: String?

        /// Creates a value.
        public init(id: String, direction: Direction, from: AccountID, to: AccountID, actor: String?, reason: String?) {
            self.id = id
            self.direction = direction
            self.from = from
            self.to = to
            self.actor = actor
            self.reason = reason
        }
    }

    /// ``EventType/entitlementChanged``: the entitlement before and after.
    public var change: Change?
    /// For `subscription.extended`: what support did at Apple.
    public var support: Support?

    /// An entitlement's change.
    public struct Change: Sendable, Hashable {
        /// The entitlement's identifier.
        public var entitlement: String
        /// As last announced (`nil`: never announced before).
        public var before: EntitlementSnapshot.Item?
        /// Now.
        public var after: EntitlementSnapshot.Item

        /// Creates a value.
        public init(entitlement: String, before: EntitlementSnapshot.Item?, after: EntitlementSnapshot.Item) {
            self.entitlement = entitlement
            self.before = before
            self.after = after
        }
    }

    /// What support did at Apple for the account (`subscription.extended`), and who did it.
    public struct Support: Sendable, Hashable {
        /// What was done: `extend_renewal_date`.
        public var action: String
        /// Why, as Apple's reason code names it (`customer-satisfaction`, …).
        public var reason: String
        /// Who did it (an API key's name).
        public var actor: String?
        /// How many days the renewal date moved.
        public var days: Int?
        /// The request identifier sent to Apple.
        public var requestIdentifier: String?
        /// The new renewal date Apple answered.
        public var effectiveDate: Date?

        public init(action: String, reason: String, actor: String?, days: Int?, requestIdentifier: String?, effectiveDate: Date?) {
            self.action = action
            self.reason = reason
            self.actor = actor
            self.days = days
            self.requestIdentifier = requestIdentifier
            self.effectiveDate = effectiveDate
        }
    }

    /// The grant a grant's event is about.
    public struct Grant: Sendable, Hashable {
        /// The grant's id.
        public var id: String
        /// The entitlement granted.
        public var entitlement: String
        /// When it starts.
        public var startsAt: Date
        /// When it ends by itself.
        public var expiresAt: Date
        /// Why it was granted, or (grant.revoked) why it was revoked.
        public var reason: String
        /// Who granted or revoked it (an API key's name); `nil` for its end by time.
        public var actor: String?

        public init(id: String, entitlement: String, startsAt: Date, expiresAt: Date, reason: String, actor: String?) {
            self.id = id
            self.entitlement = entitlement
            self.startsAt = startsAt
            self.expiresAt = expiresAt
            self.reason = reason
            self.actor = actor
        }
    }

    public init(
        id: String, sequence: Int64, type: EventType, account: AccountID, productId: String,
        environment: AppStoreEnvironment?, transactionId: String?, originalTransactionId: String?,
        occurredAt: Date, recordedAt: Date, source: String, notificationType: String? = nil,
        notificationSubtype: String? = nil, notificationUUID: String? = nil, previousState: SubscriptionEntitlement.State? = nil,
        revocationReason: Int? = nil, quantity: Int? = nil, idempotencyKey: String? = nil, refusal: String? = nil,
        entitlement: Entitlement?, grant: Grant? = nil, transfer: Transfer? = nil, change: Change? = nil, support: Support? = nil
    ) {
        self.id = id
        self.sequence = sequence
        self.type = type
        self.account = account
        self.productId = productId
        self.environment = environment
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.occurredAt = occurredAt
        self.recordedAt = recordedAt
        self.source = source
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.notificationUUID = notificationUUID
        self.previousState = previousState
        self.revocationReason = revocationReason
        self.quantity = quantity
        self.idempotencyKey = idempotencyKey
        self.refusal = refusal
        self.entitlement = entitlement
        self.grant = grant
        self.transfer = transfer
        self.change = change
        self.support = support
    }
}

/// The source of an event that no proof caused.
extension LedgerEvent {
    /// ``source`` of a consumption.
    public static let consumptionSource = "consumption"
    /// ``source`` of a grant or its revocation.
    public static let grantSource = "grant"
    /// ``source`` of support's move of a purchase (``Ledger/transfer(_:)``); a restore's move
    /// has the presented proof's kind.
    public static let transferSource = "transfer"
    /// ``source`` of an action support took at Apple.
    public static let supportSource = "support"
}

public import Foundation
public import StoreGateCore

/// One of the app's entitlements for one account at one date: the answer to "is this customer
/// entitled to X, until when, and why?".
///
/// Derived when read (``EntitlementResolver``) from what the account holds, the catalog's
/// mapping (``EntitlementDefinition``) and its grants, so a changed mapping applies to every
/// customer at once. Every source that unlocks it is listed; the strongest decides:
/// an active source before an inactive one, then the one that lasts longest (no end before any
/// end), then a purchase before a grant.
public struct Entitlement: Sendable, Hashable, Codable {
    /// The catalog's identifier ("pro").
    public var identifier: String
    /// Whether the account is entitled now.
    public var isActive: Bool
    /// When the strongest source ends (`nil`: it does not, or nothing unlocks it).
    public var expiresAt: Date?
    /// Whether the subscription behind it renews (`nil` when no subscription decides it).
    public var willRenew: Bool?
    /// The state of the subscription behind it, when one decides it.
    public var subscriptionState: SubscriptionEntitlement.State?
    /// The kind of period the deciding subscription is in, when known.
    public var periodType: PeriodType?
    /// For a currency: the balance (units × their worth), never negative.
    public var balance: Int?
    /// The strongest source, `nil` when nothing ever unlocked it.
    public var source: EntitlementSource?
    /// The other sources, strongest first.
    public var otherSources: [EntitlementSource]

    /// Creates a value.
    public init(
        identifier: String, isActive: Bool, expiresAt: Date?, willRenew: Bool?, subscriptionState: SubscriptionEntitlement.State?,
        periodType: PeriodType?, balance: Int?, source: EntitlementSource?, otherSources: [EntitlementSource]
    ) {
        self.identifier = identifier
        self.isActive = isActive
        self.expiresAt = expiresAt
        self.willRenew = willRenew
        self.subscriptionState = subscriptionState
        self.periodType = periodType
        self.balance = balance
        self.source = source
        self.otherSources = otherSources
    }
}

/// What unlocks an entitlement: a product the account owns, a subscription's transaction, or a
/// grant.
public struct EntitlementSource: Sendable, Hashable, Codable {
    /// The kind of source.
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        /// A product held for good: a non-consumable, or a consumable with units left.
        case product
        /// A subscription's deciding transaction (auto-renewable or non-renewing).
        case transaction
        /// A grant by support or a backend.
        case grant
    }

    /// The kind.
    public var kind: Kind
    /// Whether it unlocks the entitlement now.
    public var isActive: Bool
    /// When it ends (`nil`: it does not).
    public var expiresAt: Date?
    /// The product, for a product or a transaction.
    public var productId: String?
    /// The transaction (the deciding one of a subscription), for a product or a transaction.
    public var transactionId: String?
    /// Its purchase family.
    public var originalTransactionId: String?
    /// The environment of the transaction.
    public var environment: AppStoreEnvironment?
    /// A subscription's state.
    public var subscriptionState: SubscriptionEntitlement.State?
    /// Whether the subscription renews.
    public var willRenew: Bool?
    /// The subscription's period type, when known.
    public var periodType: PeriodType?
    /// The grant's id, for a grant.
    public var grantId: String?

    /// Creates a value.
    public init(
        kind: Kind, isActive: Bool, expiresAt: Date?, productId: String? = nil, transactionId: String? = nil, originalTransactionId: String? = nil,
        environment: AppStoreEnvironment? = nil, subscriptionState: SubscriptionEntitlement.State? = nil, willRenew: Bool? = nil,
        periodType: PeriodType? = nil, grantId: String? = nil
    ) {
        self.kind = kind
        self.isActive = isActive
        self.expiresAt = expiresAt
        self.productId = productId
        self.transactionId = transactionId
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.subscriptionState = subscriptionState
        self.willRenew = willRenew
        self.periodType = periodType
        self.grantId = grantId
    }

    /// Whether `self` decides over `other`: active first, then the longest lasting, then a
    /// purchase before a grant, then by product and transaction id (a stable order).
    public func isStronger(than other: EntitlementSource) -> Bool {
        if isActive != other.isActive { return isActive }
        switch (expiresAt, other.expiresAt) {
        case (nil, .some): return isActive
        case (.some, nil): return !other.isActive
        case (.some(let mine), .some(let theirs)) where mine != theirs: return mine > theirs
        default: break
        }
        if (kind == .grant) != (other.kind == .grant) { return kind != .grant }
        return (productId ?? "", transactionId ?? grantId ?? "") < (other.productId ?? "", other.transactionId ?? other.grantId ?? "")
    }
}

/// The kind of period a subscription is in (Apple's offer type and discount).
public struct PeriodType: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    /// A free trial (an introductory offer with the free-trial discount).
    public static let trial = PeriodType(rawValue: "trial")
    /// An introductory price (pay as you go, pay up front).
    public static let introductory = PeriodType(rawValue: "introductory")
    /// A promotional offer, an offer code or a win-back offer.
    public static let promotional = PeriodType(rawValue: "promotional")
    /// The regular price.
    public static let normal = PeriodType(rawValue: "normal")

    /// The period type of a transaction with these money facts, as Apple's offer fields say:
    /// an introductory offer (`offerType` 1) is a ``trial`` with the `FREE_TRIAL` discount and
    /// ``introductory`` otherwise (pay as you go, pay up front); a promotional offer (2), an
    /// offer code (3) or a win-back offer (4) is ``promotional`` (any other offer type too);
    /// no offer is ``normal``.
    public init(money: MoneyFacts) {
        switch money.offerType {
        case nil: self = .normal
        case MoneyFacts.introductoryOffer?: self = money.isFreeTrial ? .trial : .introductory
        default: self = .promotional
        }
    }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(String.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

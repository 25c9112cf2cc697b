public import Foundation
public import StoreGateCore

/// The state of one account's auto-renewable subscription in one subscription group, at a
/// given date, with the transactions and notifications that decided it.
public struct SubscriptionEntitlement: Sendable, Hashable, Codable {
    /// Where the subscription stands.
    public enum State: String, Sendable, Hashable, Codable, CaseIterable {
        /// A period covers the date.
        case active
        /// The period ended, billing is being retried and Apple's grace period covers the date.
        case inGracePeriod = "in_grace_period"
        /// The period ended and Apple is retrying billing (no grace period covers the date).
        case inBillingRetry = "in_billing_retry"
        /// The last period ended.
        case expired
        /// Apple refunded or revoked the most recent transaction.
        case revoked
        /// The customer upgraded to another product whose transaction the ledger has not seen.
        case upgraded

        /// Whether the customer is entitled to the service: ``active`` or ``inGracePeriod``.
        public var isEntitled: Bool { self == .active || self == .inGracePeriod }
    }

    /// The subscription group (Apple's, the catalog's, or the product id).
    public var subscriptionGroup: String
    /// Where the subscription stands at the date asked.
    public var state: State
    /// The product of the deciding transaction.
    public var productId: String
    /// The environment of the deciding transaction.
    public var environment: AppStoreEnvironment
    /// The family of the deciding transaction.
    public var originalTransactionId: String
    /// The transaction that decided the state.
    public var decidingTransactionId: String
    /// The end of the deciding transaction's period.
    public var expiresDate: Date?
    /// From the latest renewal info, when the ledger has one.
    public var willAutoRenew: Bool?
    /// The product the subscription renews into, from the renewal info.
    public var autoRenewProductId: String?
    /// Whether Apple is retrying billing, from the renewal info.
    public var isInBillingRetryPeriod: Bool
    /// The end of Apple's billing grace period, from the renewal info.
    public var gracePeriodExpiresDate: Date?
    /// Apple's expiration intent, from the renewal info.
    public var expirationIntent: Int?
    /// Every transaction of the group, by purchase date.
    public var transactions: [RecordedTransaction]
    /// Every notification about the group's purchases, by signing date.
    public var notifications: [RecordedNotification]

    /// Whether the customer is entitled to the service.
    public var isEntitled: Bool { state.isEntitled }

    /// The kind of period the deciding transaction paid for (trial, introductory, promotional,
    /// normal); `nil` while its money facts are unknown (known only from an app receipt).
    public var periodType: PeriodType? {
        transactions.last { $0.transactionId == decidingTransactionId }?.periodType
    }
}

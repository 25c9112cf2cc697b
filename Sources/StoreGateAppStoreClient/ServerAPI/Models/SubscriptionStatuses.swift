import StoreGateCore
import StoreGateSignedData

/// Get All Subscription Statuses, every signed payload verified.
public struct SubscriptionStatuses: Sendable, Hashable, Codable {
    /// One subscription group.
    public struct Group: Sendable, Hashable, Codable {
        public let subscriptionGroupIdentifier: String?
        public let lastTransactions: [LastTransaction]
    }

    /// The latest transaction of one subscription, with its renewal state.
    public struct LastTransaction: Sendable, Hashable, Codable {
        public let status: SubscriptionStatus?
        public let originalTransactionId: String?
        public let transaction: VerifiedTransaction?
        public let renewalInfo: VerifiedRenewalInfo?
    }

    public let environment: Environment?
    public let bundleId: String?
    public let appAppleId: Int64?
    public let groups: [Group]
}

/// Look Up Order ID, every transaction verified.
public struct OrderLookup: Sendable, Hashable, Codable {
    /// 0 the order id is valid, 1 it is not.
    public let status: Int
    /// Whether Apple knows the order.
    public var isValid: Bool { status == 0 }
    public let transactions: [VerifiedTransaction]
}

public import StoreGateCore
public import StoreGateSignedData

/// Get All Subscription Statuses, every signed payload verified.
public struct SubscriptionStatuses: Sendable, Hashable, Encodable {
    /// One subscription group.
    public struct Group: Sendable, Hashable, Encodable {
        /// The subscription group.
        public let subscriptionGroupIdentifier: String?
        /// The latest transaction of each subscription in the group.
        public let lastTransactions: [LastTransaction]
    }

    /// The latest transaction of one subscription, with its renewal state.
    public struct LastTransaction: Sendable, Hashable, Encodable {
        /// The status Apple reports.
        public let status: SubscriptionStatus?
        /// The original transaction id.
        public let originalTransactionId: String?
        /// The verified latest transaction.
        public let transaction: VerifiedTransaction?
        /// The verified renewal info.
        public let renewalInfo: VerifiedRenewalInfo?
    }

    /// The environment Apple names.
    public let environment: AppStoreEnvironment?
    /// The bundle id Apple names.
    public let bundleId: String?
    /// The app's App Store identifier.
    public let appAppleId: Int64?
    /// Every subscription group.
    public let groups: [Group]
}

/// Look Up Order ID, every transaction verified.
public struct OrderLookup: Sendable, Hashable, Encodable {
    /// 0 the order id is valid, 1 it is not.
    public let status: Int
    /// Whether Apple knows the order.
    public var isValid: Bool { status == 0 }
    /// The verified transactions.
    public let transactions: [VerifiedTransaction]
}

import StoreGateCore

/// The status of an auto-renewable subscription in Get All Subscription Statuses.
public struct SubscriptionStatus: RawRepresentable, Sendable, Hashable, Codable, CustomStringConvertible {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    /// 1: active.
    public static let active = SubscriptionStatus(rawValue: 1)
    /// 2: expired.
    public static let expired = SubscriptionStatus(rawValue: 2)
    /// 3: in the billing retry period.
    public static let billingRetry = SubscriptionStatus(rawValue: 3)
    /// 4: in the billing grace period.
    public static let billingGracePeriod = SubscriptionStatus(rawValue: 4)
    /// 5: revoked (refunded or removed from Family Sharing).
    public static let revoked = SubscriptionStatus(rawValue: 5)

    public var description: String {
        switch rawValue {
        case 1: return "active"
        case 2: return "expired"
        case 3: return "billing_retry"
        case 4: return "billing_grace_period"
        case 5: return "revoked"
        default: return "status_\(rawValue)"
        }
    }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

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

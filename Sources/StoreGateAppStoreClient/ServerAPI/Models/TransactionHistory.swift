public import Foundation
public import StoreGateCore

/// Filters and order for Get Transaction History (v2).
public struct TransactionHistoryQuery: Sendable, Hashable {
    /// `ASCENDING` (default) or `DESCENDING` by modification date.
    public enum Sort: String, Sendable, Hashable, Codable {
        case ascending = "ASCENDING"
        case descending = "DESCENDING"
    }

    /// The order by modification date.
    public var sort: Sort?
    /// Only transactions modified at or after this time.
    public var startDate: Date?
    /// Only transactions modified before this time.
    public var endDate: Date?
    /// Only these products.
    public var productIds: [String]
    /// Apple's product types: `AUTO_RENEWABLE`, `NON_RENEWABLE`, `CONSUMABLE`, `NON_CONSUMABLE`.
    public var productTypes: [String]
    /// Only these subscription groups.
    public var subscriptionGroupIdentifiers: [String]
    /// `FAMILY_SHARED` or `PURCHASED`.
    public var inAppOwnershipType: String?
    /// Only revoked (`true`) or only not revoked (`false`) transactions.
    public var revoked: Bool?

    /// Creates a value from its parts.
    public init(
        sort: Sort? = nil,
        startDate: Date? = nil,
        endDate: Date? = nil,
        productIds: [String] = [],
        productTypes: [String] = [],
        subscriptionGroupIdentifiers: [String] = [],
        inAppOwnershipType: String? = nil,
        revoked: Bool? = nil
    ) {
        self.sort = sort
        self.startDate = startDate
        self.endDate = endDate
        self.productIds = productIds
        self.productTypes = productTypes
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.inAppOwnershipType = inAppOwnershipType
        self.revoked = revoked
    }

    /// The query items, in Apple's parameter names.
    func items(revision: String?) -> [(String, String)] {
        var items: [(String, String)] = []
        if let revision { items.append(("revision", revision)) }
        if let sort { items.append(("sort", sort.rawValue)) }
        if let startDate { items.append(("startDate", String(Int64(startDate.timeIntervalSince1970 * 1000)))) }
        if let endDate { items.append(("endDate", String(Int64(endDate.timeIntervalSince1970 * 1000)))) }
        items += productIds.map { ("productId", $0) }
        items += productTypes.map { ("productType", $0) }
        items += subscriptionGroupIdentifiers.map { ("subscriptionGroupIdentifier", $0) }
        if let inAppOwnershipType { items.append(("inAppOwnershipType", inAppOwnershipType)) }
        if let revoked { items.append(("revoked", revoked ? "true" : "false")) }
        return items
    }
}

/// One page of Get Transaction History or Get Refund History, every transaction verified.
public struct TransactionPage: Sendable, Hashable, Encodable {
    /// The verified transactions of this page.
    public let transactions: [VerifiedTransaction]
    /// The token for the next page (`revision`).
    public let revision: String?
    /// Whether more pages follow.
    public let hasMore: Bool
    /// The bundle id Apple names.
    public let bundleId: String?
    /// The app's App Store identifier.
    public let appAppleId: Int64?
    /// The environment Apple names.
    public let environment: AppStoreEnvironment?
}

/// The dimensions of a rollup key a read keeps; the others are summed over (read as empty
/// strings), so a metric reads one row per day and kept value instead of one per stored key.
public struct RollupDimensions: OptionSet, Sendable, Hashable {
    public let rawValue: Int

    /// Creates a set from its raw value.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// ``RollupKey/productId``.
    public static let product = RollupDimensions(rawValue: 1 << 0)
    /// ``RollupKey/subscriptionGroup``.
    public static let subscriptionGroup = RollupDimensions(rawValue: 1 << 1)
    /// ``RollupKey/storefront``.
    public static let storefront = RollupDimensions(rawValue: 1 << 2)
    /// ``RollupKey/currency``.
    public static let currency = RollupDimensions(rawValue: 1 << 3)
    /// ``RollupKey/offer``.
    public static let offer = RollupDimensions(rawValue: 1 << 4)
    /// Every dimension: the stored rollups as they are.
    public static let all: RollupDimensions = [.product, .subscriptionGroup, .storefront, .currency, .offer]

    /// The dimension of a grouping.
    public init(_ grouping: AnalyticsGrouping) {
        switch grouping {
        case .product: self = .product
        case .subscriptionGroup: self = .subscriptionGroup
        case .storefront: self = .storefront
        case .currency: self = .currency
        case .offer: self = .offer
        }
    }

    /// Whether a read keeping these dimensions can sum the rollups' day sums (schema 18:
    /// `ledger_rollup_days`, one row per measure, environment, day and currency,
    /// ``Rollup/daySums(_:)``) instead of every stored key: it keeps the currency at most.
    package var readsDaySums: Bool { isSubset(of: .currency) }

    /// The key with the dimensions not kept emptied.
    public func projecting(_ key: RollupKey) -> RollupKey {
        var projected = key
        if !contains(.product) { projected.productId = "" }
        if !contains(.subscriptionGroup) { projected.subscriptionGroup = "" }
        if !contains(.storefront) { projected.storefront = "" }
        if !contains(.currency) { projected.currency = "" }
        if !contains(.offer) { projected.offer = "" }
        return projected
    }
}

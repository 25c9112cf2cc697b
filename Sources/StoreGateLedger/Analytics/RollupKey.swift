public import StoreGateCore

/// One daily rollup's identity: the UTC day, the measure, and the dimensions metrics are
/// grouped by.
///
/// Unknown dimensions are empty strings (a receipt's storefront and currency).
public struct RollupKey: Sendable, Hashable, Codable, Comparable {
    /// Days since 1970-01-01 (UTC).
    public var day: Int64
    /// What is counted.
    public var measure: RollupMeasure
    /// The environment of the transactions (analytics read production unless asked).
    public var environment: AppStoreEnvironment
    /// The product.
    public var productId: String
    /// The subscription group (the product id for products outside one).
    public var subscriptionGroup: String
    /// Apple's three-letter storefront code; empty when unknown.
    public var storefront: String
    /// The ISO 4217 currency of the amount; empty when unknown.
    public var currency: String
    /// The offer (``RollupKey/offer(of:)``).
    public var offer: String

    /// Creates a key.
    public init(
        day: Int64, measure: RollupMeasure, environment: AppStoreEnvironment, productId: String, subscriptionGroup: String,
        storefront: String, currency: String, offer: String
    ) {
        self.day = day
        self.measure = measure
        self.environment = environment
        self.productId = productId
        self.subscriptionGroup = subscriptionGroup
        self.storefront = storefront
        self.currency = currency
        self.offer = offer
    }

    /// ``<(_:_:)`` on the keys of two rollups read in place, field by field (``Rollup/merged(_:)``
    /// sorts thousands): no rollup, and no key, is copied to compare them.
    static func precedes(_ lhs: UnsafePointer<Rollup>, _ rhs: UnsafePointer<Rollup>) -> Bool {
        if lhs.pointee.key.day != rhs.pointee.key.day { return lhs.pointee.key.day < rhs.pointee.key.day }
        if lhs.pointee.key.measure != rhs.pointee.key.measure { return lhs.pointee.key.measure < rhs.pointee.key.measure }
        if lhs.pointee.key.environment.rawValue != rhs.pointee.key.environment.rawValue {
            return lhs.pointee.key.environment.rawValue < rhs.pointee.key.environment.rawValue
        }
        if lhs.pointee.key.productId != rhs.pointee.key.productId { return lhs.pointee.key.productId < rhs.pointee.key.productId }
        if lhs.pointee.key.subscriptionGroup != rhs.pointee.key.subscriptionGroup {
            return lhs.pointee.key.subscriptionGroup < rhs.pointee.key.subscriptionGroup
        }
        if lhs.pointee.key.storefront != rhs.pointee.key.storefront { return lhs.pointee.key.storefront < rhs.pointee.key.storefront }
        if lhs.pointee.key.currency != rhs.pointee.key.currency { return lhs.pointee.key.currency < rhs.pointee.key.currency }
        return lhs.pointee.key.offer < rhs.pointee.key.offer
    }

    /// By day, measure, environment, product, group, storefront, currency and offer: each
    /// field compared only when the ones before it are equal (most keys differ by day).
    public static func < (lhs: RollupKey, rhs: RollupKey) -> Bool {
        if lhs.day != rhs.day { return lhs.day < rhs.day }
        if lhs.measure != rhs.measure { return lhs.measure < rhs.measure }
        if lhs.environment != rhs.environment { return lhs.environment.rawValue < rhs.environment.rawValue }
        if lhs.productId != rhs.productId { return lhs.productId < rhs.productId }
        if lhs.subscriptionGroup != rhs.subscriptionGroup { return lhs.subscriptionGroup < rhs.subscriptionGroup }
        if lhs.storefront != rhs.storefront { return lhs.storefront < rhs.storefront }
        if lhs.currency != rhs.currency { return lhs.currency < rhs.currency }
        return lhs.offer < rhs.offer
    }

    /// The offer dimension of a transaction: `none` (no offer), `free_trial`, `introductory`
    /// (an introductory price), `promotional`, `offer_code`, `win_back` or `offer_<n>` (another
    /// offer type), followed by `:` and the offer identifier when Apple states one; `unknown`
    /// when the money facts are unknown.
    public static func offer(of money: MoneyFacts?) -> String {
        guard let money else { return "unknown" }
        let kind: String
        switch money.offerType {
        case nil: return "none"
        case MoneyFacts.introductoryOffer?: kind = money.isFreeTrial ? "free_trial" : "introductory"
        case MoneyFacts.promotionalOffer?: kind = "promotional"
        case MoneyFacts.offerCode?: kind = "offer_code"
        case MoneyFacts.winBackOffer?: kind = "win_back"
        case let other?: kind = "offer_\(other)"
        }
        return money.offerIdentifier.map { "\(kind):\($0)" } ?? kind
    }
}

/// A rollup's figures: a count and an amount in milliunits of the key's currency.
public struct RollupValue: Sendable, Hashable, Codable {
    /// How many.
    public var count: Int64
    /// How much, in milliunits (zero for measures without money).
    public var amount: Int64

    /// Creates a value.
    public init(count: Int64, amount: Int64 = 0) {
        self.count = count
        self.amount = amount
    }

    /// Whether both figures are zero (such rollups are not stored).
    public var isZero: Bool { count == 0 && amount == 0 }

    /// Adds another value's figures.
    public mutating func add(_ other: RollupValue, sign: Int64 = 1) {
        count &+= sign &* other.count
        amount &+= sign &* other.amount
    }
}

/// A stored rollup: its key and figures.
public struct Rollup: Sendable, Hashable, Codable {
    /// The key.
    public var key: RollupKey
    /// The figures.
    public var value: RollupValue

    /// Creates a rollup.
    public init(key: RollupKey, value: RollupValue) {
        self.key = key
        self.value = value
    }

    /// `rollups` summed per measure, environment, day and currency (the other dimensions
    /// empty), merged: what the backends add to their day sums (`ledger_rollup_days`, schema
    /// 18) with every change of the rollups, so that a read keeping the currency at most
    /// (``RollupDimensions/readsDaySums``) reads a row per day rather than per stored key.
    package static func daySums(_ rollups: [Rollup]) -> [Rollup] {
        merged(rollups.map { Rollup(key: RollupDimensions.currency.projecting($0.key), value: $0.value) })
    }

    /// The rollups with equal keys summed, zero sums dropped, sorted by key: their positions
    /// sorted first, then each run of equal keys summed (no key is hashed; a write's dozen
    /// figures and a fold's thousands alike).
    ///
    /// Positions, not the rollups, are sorted, the keys read in place: sorting the rollups moved
    /// each one (seven strings) in and out of the sort's buffers, retaining and releasing every
    /// string each time — half of a fold's merge in a profile.
    public static func merged(_ rollups: [Rollup]) -> [Rollup] {
        rollups.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return [] }
            // Through pointers: `buffer[i].key` copied the whole rollup for each comparison.
            let order = Array(buffer.indices).sorted { RollupKey.precedes(base + $0, base + $1) }
            var result: [Rollup] = []
            result.reserveCapacity(order.count)
            var next = 0
            while next < order.count {
                let first = base + order[next]
                var value = first.pointee.value
                next += 1
                while next < order.count, !RollupKey.precedes(first, base + order[next]) {
                    value.add((base + order[next]).pointee.value)
                    next += 1
                }
                if !value.isZero { result.append(Rollup(key: first.pointee.key, value: value)) }
            }
            return result
        }
    }
}

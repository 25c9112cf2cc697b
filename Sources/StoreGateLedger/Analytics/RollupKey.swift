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

    /// By day, measure, environment, product, group, storefront, currency and offer: each
    /// field compared only when the ones before it are equal (most keys differ by day).
    public static func < (lhs: RollupKey, rhs: RollupKey) -> Bool {
        withUnsafePointer(to: lhs) { lhs in withUnsafePointer(to: rhs) { rhs in precedes(lhs, rhs) } }
    }

    /// ``<(_:_:)`` on two keys read in place (``Rollup/merged(_:)`` sorts thousands of rollups
    /// by key): no key is copied to compare them.
    static func precedes(_ lhs: UnsafePointer<RollupKey>, _ rhs: UnsafePointer<RollupKey>) -> Bool {
        if lhs.pointee.day != rhs.pointee.day { return lhs.pointee.day < rhs.pointee.day }
        if lhs.pointee.measure != rhs.pointee.measure { return lhs.pointee.measure < rhs.pointee.measure }
        if lhs.pointee.environment.rawValue != rhs.pointee.environment.rawValue {
            return lhs.pointee.environment.rawValue < rhs.pointee.environment.rawValue
        }
        if lhs.pointee.productId != rhs.pointee.productId { return lhs.pointee.productId < rhs.pointee.productId }
        if lhs.pointee.subscriptionGroup != rhs.pointee.subscriptionGroup { return lhs.pointee.subscriptionGroup < rhs.pointee.subscriptionGroup }
        if lhs.pointee.storefront != rhs.pointee.storefront { return lhs.pointee.storefront < rhs.pointee.storefront }
        if lhs.pointee.currency != rhs.pointee.currency { return lhs.pointee.currency < rhs.pointee.currency }
        return lhs.pointee.offer < rhs.pointee.offer
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
            guard let base = buffer.baseAddress, let offset = MemoryLayout<Rollup>.offset(of: \Rollup.key) else { return [] }
            // Through pointers to the keys: `buffer[i].key` copied the whole rollup for each comparison.
            func key(_ position: Int) -> UnsafePointer<RollupKey> {
                (UnsafeRawPointer(base + position) + offset).assumingMemoryBound(to: RollupKey.self)
            }
            let order = Array(buffer.indices).sorted { RollupKey.precedes(key($0), key($1)) }
            var result: [Rollup] = []
            result.reserveCapacity(order.count)
            var next = 0
            while next < order.count {
                let first = order[next]
                var value = buffer[first].value
                next += 1
                while next < order.count, !RollupKey.precedes(key(first), key(order[next])) {
                    value.add(buffer[order[next]].value)
                    next += 1
                }
                if !value.isZero { result.append(Rollup(key: key(first).pointee, value: value)) }
            }
            return result
        }
    }
}

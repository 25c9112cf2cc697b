import Foundation
import StoreGateCore
import StoreGateLedger
import StoreGateTestSupport

/// The two-year ledger story `storegate-dev bench analytics` records: `transactions`
/// transactions of `transactions / 10` subscribers (100,000 for a million), deterministic
/// (each subscriber's story comes from a generator seeded by its number).
///
/// Each subscriber lives in one of three storefronts, each with its currency (USA/USD 55 %,
/// DEU/EUR 35 %, JPN/JPY 10 %), and joins on a day spread evenly over the two years. 70 %
/// subscribe, in group `pro` (weekly, monthly, yearly) or `max` (monthly, yearly): 45 % start
/// with a 7-day free trial (40 % of them convert; the others turn renewal off), 15 % with an
/// introductory price (half price, 3 weeks or months or one year), the rest at full price.
/// Every paid period renews unless the subscriber churns at its end (7 % a week, 5 % a month,
/// 35 % a year; 20 % more when an introductory price ends): 70 % of churns are voluntary
/// (renewal turned off during the last period), 30 % billing (`DID_FAIL_TO_RENEW`). 1.5 % of
/// paid periods are refunded (`REFUND`), which ends the subscription. 20 % of churned
/// subscribers come back 20 to 150 days later in the same purchase family (40 % of them with a
/// win-back offer at half price). 2 % of monthly and weekly periods are upgraded mid-period to
/// the group's yearly product; 3 % of renewals move down (yearly to monthly, monthly to
/// weekly). 6 % of subscribers buy a non-consumable once. The transactions that remain to
/// make `transactions` are consumables (two products), bought by 40 % of the subscribers at
/// times spread over their time since joining.
///
/// The facts are told in the order they happened: purchases and renewals as signed
/// transactions (renewal info with them where Apple would send it), refunds, renewal changes
/// and billing failures as notifications.
struct AnalyticsWorkload: Sendable {
    /// One fact the ledger is told, compact (its proof is built when it is recorded).
    struct Fact: Sendable {
        /// What kind of fact.
        enum Kind: UInt8, Sendable {
            /// A purchase or a renewal: one signed transaction.
            case purchase
            /// A purchase after a lapse: a signed transaction with renewal info turned on.
            case resubscribe
            /// An upgrade: the upgraded period and the new one, in one proof.
            case upgrade
            /// Apple refunded the period: a `REFUND` notification.
            case refund
            /// The subscriber turned renewal off: `DID_CHANGE_RENEWAL_STATUS`.
            case renewalOff
            /// The renewal could not be billed: `DID_FAIL_TO_RENEW`.
            case billingFailure
        }

        /// When it happened, milliseconds since 1970.
        var time: Int64
        var subscriber: Int32
        var kind: Kind
        /// The transaction (the new one of an upgrade).
        var period: Period
        /// The upgraded transaction of an upgrade.
        var previous: Period?
    }

    /// One transaction, compact.
    struct Period: Sendable {
        var serial: Int32
        var product: UInt8
        /// Purchase and expiry (zero: none), milliseconds since 1970.
        var start: Int64
        var end: Int64
        var price: Int64
        var offer: Offer
        var isRenewal: Bool
        var revoked: Int64 = 0
        var isUpgraded = false
    }

    /// The offer a period was bought with.
    enum Offer: UInt8, Sendable {
        case none, freeTrial, introductory, winBack
    }

    /// A product of the story.
    struct Product: Sendable {
        var id: String
        var type: ProductType
        var group: String?
        var days: Int64
        /// Prices in milliunits of USD, EUR, JPY.
        var prices: [Int64]
    }

    static let products: [Product] = [
        Product(id: "pro.weekly", type: .autoRenewable, group: "pro", days: 7, prices: [2_990, 2_990, 400_000]),
        Product(id: "pro.monthly", type: .autoRenewable, group: "pro", days: 30, prices: [9_990, 10_990, 1_500_000]),
        Product(id: "pro.yearly", type: .autoRenewable, group: "pro", days: 365, prices: [79_990, 89_990, 12_000_000]),
        Product(id: "max.monthly", type: .autoRenewable, group: "max", days: 30, prices: [19_990, 21_990, 3_000_000]),
        Product(id: "max.yearly", type: .autoRenewable, group: "max", days: 365, prices: [159_990, 179_990, 24_000_000]),
        Product(id: "coins.small", type: .consumable, group: nil, days: 0, prices: [990, 1_190, 160_000]),
        Product(id: "coins.large", type: .consumable, group: nil, days: 0, prices: [4_990, 5_990, 800_000]),
        Product(id: "themes.lifetime", type: .nonConsumable, group: nil, days: 0, prices: [14_990, 16_990, 2_400_000]),
    ]
    static let storefronts = ["USA", "DEU", "JPN"]
    static let currencies = ["USD", "EUR", "JPY"]
    static let bundleId = "com.example.storegate.analytics"

    /// The catalog of the story's products.
    static var catalog: ProductCatalog {
        var catalog = ProductCatalog()
        for product in products {
            catalog.products[product.id] = ProductCatalog.Product(type: product.type, subscriptionGroup: product.group)
        }
        catalog.entitlements["pro"] = EntitlementDefinition(products: ["pro.weekly", "pro.monthly", "pro.yearly", "max.monthly", "max.yearly"])
        return catalog
    }

    /// The first day of the story: 2025-01-01 (UTC).
    static let firstDay = AnalyticsDay(year: 2025, month: 1, day: 1)
    /// The story's days.
    static let days: Int64 = 730
    /// The last day of the story (2026-12-31): the queries' `today`.
    static var lastDay: AnalyticsDay { AnalyticsDay(firstDay.number + days - 1) }

    static let millisecondsPerDay: Int64 = 86_400_000

    /// The facts, in the order they happened.
    let facts: [Fact]
    /// The subscribers' storefronts (index into ``storefronts``).
    let regions: [UInt8]
    /// Transactions in the story (a refund or a renewal change is a fact, not a transaction).
    let transactions: Int
    let subscribers: Int

    /// Builds the story of `transactions` transactions.
    init(transactions target: Int) {
        let subscribers = max(1, target / 10)
        let start = Self.firstDay.number * Self.millisecondsPerDay
        let end = start + Self.days * Self.millisecondsPerDay
        var facts: [Fact] = []
        facts.reserveCapacity(target + target / 8)
        var regions = [UInt8](repeating: 0, count: subscribers)
        var joins = [Int64](repeating: 0, count: subscribers)
        var serials = [Int32](repeating: 0, count: subscribers)
        var transactions = 0
        for subscriber in 0..<subscribers {
            var random = SplitMix64(seed: UInt64(subscriber) &* 0x9E37_79B9_7F4A_7C15 &+ 0x5107_E6A7)
            let roll = random.unit()
            let region: UInt8 = roll < 0.55 ? 0 : roll < 0.90 ? 1 : 2
            regions[subscriber] = region
            let join = start + Int64(random.unit() * Double(end - start - Self.millisecondsPerDay))
            joins[subscriber] = join
            var story = SubscriberStory(subscriber: Int32(subscriber), region: region, end: end, random: random)
            if story.random.unit() < 0.70 { story.subscribe(at: join) }
            if story.random.unit() < 0.06 {
                let at = join + Int64(story.random.unit() * 90 * Double(Self.millisecondsPerDay))
                if at < end { story.buy(product: 7, at: at) }
            }
            facts += story.facts
            transactions += story.transactions
            serials[subscriber] = story.serial
        }
        // The rest are consumables of 40 % of the subscribers.
        var random = SplitMix64(seed: 0xC0_1A5)
        let buyers = (0..<subscribers).filter { _ in random.unit() < 0.40 }
        if !buyers.isEmpty {
            while transactions < target {
                let subscriber = buyers[Int(random.next() % UInt64(buyers.count))]
                let join = joins[subscriber]
                let at = join + Int64(random.unit() * Double(end - join))
                let product: UInt8 = random.unit() < 0.75 ? 5 : 6
                let period = Period(
                    serial: serials[subscriber], product: product, start: at, end: 0,
                    price: Self.products[Int(product)].prices[Int(regions[subscriber])], offer: .none, isRenewal: false
                )
                serials[subscriber] += 1
                facts.append(Fact(time: at, subscriber: Int32(subscriber), kind: .purchase, period: period))
                transactions += 1
            }
        }
        facts.sort { ($0.time, $0.subscriber, $0.period.serial) < ($1.time, $1.subscriber, $1.period.serial) }
        self.facts = facts
        self.regions = regions
        self.transactions = transactions
        self.subscribers = subscribers
    }

    // MARK: Proofs

    static func account(_ subscriber: Int32) throws -> AccountID {
        try AccountID("subscriber-\(subscriber)")
    }

    /// The purchase family of the subscriber's product (its group), or the transaction's own id.
    static func family(_ subscriber: Int32, _ period: Period) -> String {
        products[Int(period.product)].group.map { "s\(subscriber)-\($0)" } ?? transactionId(subscriber, period)
    }

    static func transactionId(_ subscriber: Int32, _ period: Period) -> String { "s\(subscriber)-\(period.serial)" }

    static func date(_ milliseconds: Int64) -> Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

    /// The verified transaction of `period`, signed at `signed`.
    func transaction(_ subscriber: Int32, _ period: Period, signed: Int64) -> VerifiedTransaction {
        let product = Self.products[Int(period.product)]
        let region = Int(regions[Int(subscriber)])
        var money = MoneyFacts(
            price: period.price, currency: Self.currencies[region], storefront: Self.storefronts[region],
            transactionReason: period.isRenewal ? MoneyFacts.renewal : "PURCHASE"
        )
        switch period.offer {
        case .none: break
        case .freeTrial:
            money.offerType = MoneyFacts.introductoryOffer
            money.offerDiscountType = MoneyFacts.freeTrial
            money.offerPeriod = "P1W"
        case .introductory:
            money.offerType = MoneyFacts.introductoryOffer
            money.offerDiscountType = "PAY_AS_YOU_GO"
            money.offerPeriod = product.days == 365 ? "P1Y" : product.days == 7 ? "P3W" : "P3M"
        case .winBack:
            money.offerType = MoneyFacts.winBackOffer
            money.offerIdentifier = "winback50"
            money.offerDiscountType = "PAY_AS_YOU_GO"
            money.offerPeriod = product.days == 365 ? "P1Y" : product.days == 7 ? "P1W" : "P1M"
        }
        return VerifiedTransaction(
            environment: .production, bundleId: Self.bundleId, transactionId: Self.transactionId(subscriber, period),
            originalTransactionId: Self.family(subscriber, period), productId: product.id, productType: product.type, quantity: 1,
            purchaseDate: Self.date(period.start), originalPurchaseDate: Self.date(period.start),
            expiresDate: period.end == 0 ? nil : Self.date(period.end), revocationDate: period.revoked == 0 ? nil : Self.date(period.revoked),
            revocationReason: period.revoked == 0 ? nil : 1, webOrderLineItemId: nil, subscriptionGroupIdentifier: product.group,
            appAccountToken: nil, isUpgraded: period.isUpgraded, signedDate: Self.date(signed), source: .signedTransaction, money: money
        )
    }

    func renewal(_ subscriber: Int32, _ period: Period, willRenew: Bool, billing: Bool, signed: Int64) -> VerifiedRenewalInfo {
        let product = Self.products[Int(period.product)].id
        return VerifiedRenewalInfo(
            environment: .production, originalTransactionId: Self.family(subscriber, period), productId: product,
            autoRenewProductId: product, willAutoRenew: willRenew, expirationIntent: billing ? 2 : willRenew ? nil : 1,
            isInBillingRetryPeriod: billing, gracePeriodExpiresDate: nil, renewalDate: nil, signedDate: Self.date(signed)
        )
    }

    /// What telling the ledger `fact` takes: a proof to record for an account, or a notification.
    enum Message: Sendable {
        case record(VerifiedProof, AccountID)
        case notify(VerifiedNotification)
    }

    /// The message of `fact`, its raw proof `payload` bytes long (prefixed by a unique name).
    func message(_ fact: Fact, payload: [UInt8]) throws -> Message {
        let subscriber = fact.subscriber
        func raw(_ name: String) -> [UInt8] { Array(name.utf8) + payload }
        switch fact.kind {
        case .purchase, .resubscribe, .upgrade:
            var transactions = [transaction(subscriber, fact.period, signed: fact.time)]
            if let previous = fact.previous { transactions.insert(transaction(subscriber, previous, signed: fact.time), at: 0) }
            let renewalInfo = fact.kind == .resubscribe ? renewal(subscriber, fact.period, willRenew: true, billing: false, signed: fact.time) : nil
            let proof = VerifiedProof(
                kind: .signedTransaction, environment: .production, bundleId: Self.bundleId, signedDate: Self.date(fact.time),
                transactions: transactions, renewalInfo: renewalInfo, rawProof: raw("\(Self.transactionId(subscriber, fact.period)):")
            )
            return .record(proof, try Self.account(subscriber))
        case .refund, .renewalOff, .billingFailure:
            let type: String, subtype: String?
            let uuid = "n-\(Self.transactionId(subscriber, fact.period))-\(fact.kind.rawValue)"
            var transaction: VerifiedTransaction?
            var renewalInfo: VerifiedRenewalInfo?
            switch fact.kind {
            case .refund:
                (type, subtype) = ("REFUND", nil)
                transaction = self.transaction(subscriber, fact.period, signed: fact.time)
            case .renewalOff:
                (type, subtype) = ("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED")
                renewalInfo = renewal(subscriber, fact.period, willRenew: false, billing: false, signed: fact.time)
            default:
                (type, subtype) = ("DID_FAIL_TO_RENEW", nil)
                renewalInfo = renewal(subscriber, fact.period, willRenew: true, billing: true, signed: fact.time)
            }
            return .notify(VerifiedNotification(
                notificationUUID: uuid, notificationType: type, subtype: subtype, signedDate: Self.date(fact.time), environment: .production,
                bundleId: Self.bundleId, transaction: transaction, renewalInfo: renewalInfo, rawProof: raw("\(uuid):")
            ))
        }
    }

    /// Tells `ledger` every fact, spread over `writers` concurrent tasks in the order they
    /// happened; each fact's latency in microseconds, sorted, and the seconds taken.
    func record(into ledger: any Ledger, writers: Int, payload: [UInt8]) async throws -> (seconds: Double, latencies: [Double]) {
        try await record(facts.indices, into: ledger, writers: writers, payload: payload)
    }

    /// Records the facts at `range`, in story order, `writers` at a time: the n-th writer takes
    /// every `writers`-th fact from the range's n-th.
    func record(_ range: Range<Int>, into ledger: any Ledger, writers: Int, payload: [UInt8]) async throws -> (seconds: Double, latencies: [Double]) {
        let start = BenchSupport.now()
        let latencies = try await withThrowingTaskGroup(of: [Double].self) { group in
            for writer in 0..<writers {
                group.addTask {
                    var samples: [Double] = []
                    samples.reserveCapacity(range.count / writers + 1)
                    var index = range.lowerBound + writer
                    while index < range.upperBound {
                        let message = try self.message(facts[index], payload: payload)
                        let begin = BenchSupport.now()
                        switch message {
                        case .record(let proof, let account): _ = try await ledger.record(proof, for: account)
                        case .notify(let notification): _ = try await ledger.apply(notification)
                        }
                        samples.append(Double(BenchSupport.now() - begin) / 1000)
                        index += writers
                    }
                    return samples
                }
            }
            var all: [Double] = []
            for try await samples in group { all += samples }
            return all.sorted()
        }
        return (Double(BenchSupport.now() - start) / 1e9, latencies)
    }
}

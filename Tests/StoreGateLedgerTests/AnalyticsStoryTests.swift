import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Issue 29: a seeded story whose every metric was computed by hand — trials that convert
    /// and that do not, an introductory price, an upgrade and a downgrade within a group,
    /// voluntary, billing and refund churn, a reactivation, a receipt without a price, three
    /// currencies and three storefronts — on every backend, also after a rebuild and with the
    /// facts delivered in the reverse order.
    @Suite("Analytics: the seeded story")
    struct AnalyticsStory {
        /// 2026-01-01T12:00:00Z plus `days`.
        static func at(_ days: Double) -> Date { Date(timeIntervalSince1970: 1_767_268_800 + days * 86_400) }
        static let january = AnalyticsDay(year: 2026, month: 1, day: 1)
        static let today = AnalyticsDay(year: 2026, month: 3, day: 31)

        static func money(
            _ price: Int64?, _ currency: String, _ storefront: String, reason: String, offer: Int? = nil, discount: String? = nil
        ) -> MoneyFacts {
            MoneyFacts(price: price, currency: currency, storefront: storefront, offerType: offer, offerDiscountType: discount, transactionReason: reason)
        }

        /// One auto-renewable period of `family` from day `start` to day `end`.
        static func period(
            _ id: String, _ family: String, _ product: String, _ start: Double, _ end: Double, _ money: MoneyFacts?,
            upgraded: Bool = false, revoked: Double? = nil, signed: Double? = nil, source: ProofKind = .signedTransaction
        ) -> VerifiedTransaction {
            Purchases.transaction(
                id, original: family, product: product, type: source == .appReceipt ? nil : .autoRenewable, purchased: at(start),
                expires: at(end), revoked: revoked.map(at), upgraded: upgraded, group: source == .appReceipt ? nil : "pro",
                signed: at(signed ?? revoked ?? start), source: source, money: money
            )
        }

        static func renewal(_ family: String, product: String = "pro.monthly", willRenew: Bool, intent: Int? = nil, billingRetry: Bool = false, signed: Double) -> VerifiedRenewalInfo {
            VerifiedRenewalInfo(
                environment: .production, originalTransactionId: family, productId: product, autoRenewProductId: product,
                willAutoRenew: willRenew, expirationIntent: intent, isInBillingRetryPeriod: billingRetry, gracePeriodExpiresDate: nil,
                renewalDate: nil, signedDate: at(signed)
            )
        }

        enum Fact {
            case record(String, VerifiedProof)
            case notify(VerifiedNotification)
        }

        static let catalog = ProductCatalog(products: [
            "pro.monthly": .init(type: .autoRenewable, subscriptionGroup: "pro"), "pro.yearly": .init(type: .autoRenewable, subscriptionGroup: "pro"),
            "pro.weekly": .init(type: .autoRenewable, subscriptionGroup: "pro"), "coins": .init(type: .consumable),
        ])

        /// The story's facts, in the order they happened.
        static var facts: [Fact] {
            let usd = { (price: Int64, reason: String) in money(price, "USD", "USA", reason: reason) }
            let eur = { (price: Int64, reason: String) in money(price, "EUR", "DEU", reason: reason) }
            let trial = money(0, "USD", "USA", reason: "PURCHASE", offer: 1, discount: "FREE_TRIAL")
            return [
                // F1: a trial that converts, then renews.
                .record("a1", Purchases.proof(period("f1-t", "f1", "pro.monthly", 0, 7, trial))),
                .record("a1", Purchases.proof(period("f1-p1", "f1", "pro.monthly", 7, 37, usd(9990, "RENEWAL")))),
                .record("a1", Purchases.proof(Purchases.transaction(
                    "coins-1", product: "coins", type: .consumable, quantity: 2, purchased: at(7), money: usd(990, "PURCHASE")))),
                .record("a1", Purchases.proof(period("f1-p2", "f1", "pro.monthly", 37, 67, usd(9990, "RENEWAL")))),
                // F2: a trial that does not convert (renewal turned off).
                .record("a2", Purchases.proof(period("f2-t", "f2", "pro.monthly", 1, 8, trial), renewal: renewal("f2", willRenew: false, intent: 1, signed: 3))),
                // F3: an introductory price, a renewal at the normal price, then voluntary churn.
                .record("a3", Purchases.proof(period("f3-i", "f3", "pro.monthly", 2, 32, money(1990, "EUR", "DEU", reason: "PURCHASE", offer: 1, discount: "PAY_AS_YOU_GO")))),
                .record("a3", Purchases.proof(period("f3-n", "f3", "pro.monthly", 32, 62, eur(10990, "RENEWAL")), renewal: renewal("f3", willRenew: false, intent: 1, signed: 40))),
                // F4: monthly, upgraded to yearly on day 19.
                .record("a4", Purchases.proof(period("f4-m", "f4", "pro.monthly", 4, 34, usd(9990, "PURCHASE")))),
                .record("a4", Purchases.proof([
                    period("f4-m", "f4", "pro.monthly", 4, 34, usd(9990, "PURCHASE"), upgraded: true, signed: 19),
                    period("f4-y", "f4", "pro.yearly", 19, 384, usd(119_990, "PURCHASE")),
                ], signed: at(19))),
                // F5: yen, billing failure.
                .record("a5", Purchases.proof(period("f5-m", "f5", "pro.monthly", 9, 39, money(1_500_000, "JPY", "JPN", reason: "PURCHASE")))),
                .notify(Purchases.notification("f5-fail", type: "DID_FAIL_TO_RENEW", signed: at(39.5),
                    renewal: renewal("f5", willRenew: true, intent: 2, billingRetry: true, signed: 39.5))),
                // F6: refunded three days in.
                .record("a6", Purchases.proof(period("f6-m", "f6", "pro.monthly", 11, 41, usd(9990, "PURCHASE")))),
                .notify(Purchases.notification("f6-refund", type: "REFUND", signed: at(14),
                    transaction: period("f6-m", "f6", "pro.monthly", 11, 41, usd(9990, "PURCHASE"), revoked: 14))),
                // F7: monthly, downgraded to weekly at renewal.
                .record("a7", Purchases.proof(period("f7-m", "f7", "pro.monthly", 5, 35, eur(10990, "PURCHASE")))),
                .record("a7", Purchases.proof(period("f7-w1", "f7", "pro.weekly", 35, 42, eur(2990, "RENEWAL")))),
                .record("a7", Purchases.proof(period("f7-w2", "f7", "pro.weekly", 42, 49, eur(2990, "RENEWAL")),
                    renewal: renewal("f7", product: "pro.weekly", willRenew: true, signed: 42))),
                // F8: lapses, comes back on day 45.
                .record("a8", Purchases.proof(period("f8-1", "f8", "pro.monthly", 0, 30, usd(9990, "PURCHASE")))),
                .record("a8", Purchases.proof(period("f8-2", "f8", "pro.monthly", 45, 75, usd(9990, "PURCHASE")),
                    renewal: renewal("f8", willRenew: true, signed: 45))),
                // F9: only a receipt: no price.
                .record("a9", Purchases.proof([period("f9-m", "f9", "pro.monthly", 19, 49, nil, source: .appReceipt)], kind: .appReceipt)),
            ]
        }

        static func tell(_ facts: [Fact], to ledger: any Ledger) async throws {
            for fact in facts {
                switch fact {
                case .record(let account, let proof): try await ledger.record(proof, for: Purchases.account(account))
                case .notify(let notification): try await ledger.apply(notification)
                }
            }
        }

        static func series(
            _ ledger: any Ledger, _ metric: AnalyticsMetric, _ interval: AnalyticsInterval = .month, groupBy: AnalyticsGrouping? = nil,
            from: AnalyticsDay = january, to: AnalyticsDay = today
        ) async throws -> AnalyticsSeries {
            try await ledger.series(
                AnalyticsQuery(metric: metric, from: from, to: to, interval: interval, groupBy: groupBy), today: today,
                commission: .standard
            )
        }

        /// Counts per month (January, February, March).
        static func counts(_ series: AnalyticsSeries) -> [Int64] { series.points.map { $0.count ?? -1 } }

        /// Amounts per month and currency.
        static func amounts(_ series: AnalyticsSeries) -> [String: [Int64]] {
            var result: [String: [Int64]] = [:]
            for point in series.points where !point.isConverted { result[point.currency ?? "?", default: []].append(point.amount ?? -1) }
            return result
        }

        static func checkEveryMetric(_ ledger: any Ledger) async throws {
            #expect(counts(try await series(ledger, .newTrials)) == [2, 0, 0])
            #expect(counts(try await series(ledger, .trialConversions)) == [1, 0, 0])
            let rate = try await series(ledger, .trialConversionRate)
            #expect(rate.points.map(\.ratio) == [0.5, nil, nil])
            #expect(rate.points.map(\.denominator) == [2, 0, 0])
            #expect(counts(try await series(ledger, .newPaidSubscriptions)) == [8, 0, 0])
            #expect(counts(try await series(ledger, .renewals)) == [0, 4, 0])
            #expect(counts(try await series(ledger, .reactivations)) == [0, 1, 0])
            #expect(counts(try await series(ledger, .churned)) == [2, 3, 3])
            #expect(counts(try await series(ledger, .churnedVoluntary)) == [0, 0, 1])
            #expect(counts(try await series(ledger, .churnedBilling)) == [0, 1, 0])
            #expect(counts(try await series(ledger, .refunds)) == [1, 0, 0])
            #expect(amounts(try await series(ledger, .refundAmount)) == ["USD": [9990, 0, 0]])
            #expect(counts(try await series(ledger, .unpricedTransactions)) == [1, 0, 0])
            let revenue = try await series(ledger, .grossRevenue)
            #expect(amounts(revenue) == ["EUR": [12_980, 16_970, 0], "JPY": [1_500_000, 0, 0], "USD": [161_930, 19_980, 0]])
            #expect(revenue.unpricedTransactions == 1)
            #expect(amounts(try await series(ledger, .estimatedProceeds)) == ["EUR": [9086, 11_879, 0], "JPY": [1_050_000, 0, 0], "USD": [106_358, 13_986, 0]])
            #expect(counts(try await series(ledger, .activeSubscriptions)) == [6, 4, 1])
            #expect(counts(try await series(ledger, .activeTrials)) == [0, 0, 0])
            #expect(amounts(try await series(ledger, .mrr)) == ["EUR": [12_980, 10_990, 0], "JPY": [1_500_000, 0, 0], "USD": [19_989, 29_979, 9999]])
            let trialsByDay = try await series(ledger, .activeTrials, .day, to: AnalyticsDay(january.number + 9))
            #expect(counts(trialsByDay) == [1, 2, 2, 2, 2, 2, 2, 1, 0, 0])
            let byStorefront = try await series(ledger, .newPaidSubscriptions, groupBy: .storefront, to: AnalyticsDay(year: 2026, month: 1, day: 31))
            #expect(Dictionary(uniqueKeysWithValues: byStorefront.points.map { ($0.group ?? "?", $0.count ?? -1) }) == ["": 1, "DEU": 2, "JPN": 1, "USA": 4])
            let byOffer = try await series(ledger, .newPaidSubscriptions, groupBy: .offer, to: AnalyticsDay(year: 2026, month: 1, day: 31))
            #expect(Dictionary(uniqueKeysWithValues: byOffer.points.map { ($0.group ?? "?", $0.count ?? -1) }) == ["introductory": 1, "none": 6, "unknown": 1])
            let byProduct = try await series(ledger, .activeSubscriptions, groupBy: .product, from: AnalyticsDay(year: 2026, month: 2, day: 1), to: AnalyticsDay(year: 2026, month: 2, day: 28))
            #expect(Dictionary(uniqueKeysWithValues: byProduct.points.map { ($0.group ?? "?", $0.count ?? -1) }) == ["pro.monthly": 3, "pro.yearly": 1])
        }

        @Test("every metric equals its hand-computed value, after a rebuild too", arguments: LedgerBackend.all)
        func story(backend: LedgerBackend) async throws {
            try await backend.withLedger(LedgerConfiguration(catalog: Self.catalog)) { ledger async throws in
                try await Self.tell(Self.facts, to: ledger)
                try await Self.checkEveryMetric(ledger)
                let incremental = try await Self.allRollups(ledger)
                let rebuilt = try await ledger.rebuildRollups()
                #expect(rebuilt.families == 10 && rebuilt.transactions == 17)
                #expect(try await Self.allRollups(ledger) == incremental)
                try await Self.checkEveryMetric(ledger)
            }
        }

        @Test("the same facts delivered in the reverse order give the same rollups", arguments: LedgerBackend.all)
        func reverseOrder(backend: LedgerBackend) async throws {
            let forward = try await backend.withLedger(LedgerConfiguration(catalog: Self.catalog)) { ledger async throws in
                try await Self.tell(Self.facts, to: ledger)
                return try await Self.allRollups(ledger)
            }
            let backward = try await backend.withLedger(LedgerConfiguration(catalog: Self.catalog)) { ledger async throws in
                try await Self.tell(Self.facts.reversed(), to: ledger)
                return try await Self.allRollups(ledger)
            }
            #expect(forward == backward)
        }

        @Test("the receipt's transaction gets its price when a signed observation comes, and the rollups follow", arguments: LedgerBackend.all)
        func receiptFilled(backend: LedgerBackend) async throws {
            try await backend.withLedger(LedgerConfiguration(catalog: Self.catalog)) { ledger async throws in
                try await Self.tell(Self.facts, to: ledger)
                #expect(try await ledger.fillMoneyFacts(Self.money(9990, "USD", "USA", reason: "PURCHASE"), of: "f9-m", in: .production))
                let revenue = try await Self.series(ledger, .grossRevenue)
                #expect(Self.amounts(revenue)["USD"] == [171_920, 19_980, 0])
                #expect(revenue.unpricedTransactions == 0)
                let incremental = try await Self.allRollups(ledger)
                try await ledger.rebuildRollups()
                #expect(try await Self.allRollups(ledger) == incremental)
            }
        }

        /// bench write-costs' switches: recording without rollups writes none (and the
        /// rebuild then equals recording with them); adding the changes in the write, as before
        /// schema 17, queues none and gives the same rollups as queueing them.
        @Test("bench write-costs' switches: without rollups none are written; added in the write, none are queued", arguments: LedgerBackend.all, [false, true])
        func rollupSwitches(backend: LedgerBackend, addedInTheWrite: Bool) async throws {
            let reference = InMemoryLedger(configuration: LedgerConfiguration(catalog: Self.catalog))
            try await Self.tell(Self.facts, to: reference)
            var configuration = LedgerConfiguration(catalog: Self.catalog)
            if addedInTheWrite { configuration.queuesRollupChanges = false } else { configuration.maintainsRollups = false }
            try await backend.withLedger(configuration) { ledger async throws in
                try await Self.tell(Self.facts, to: ledger)
                #expect(try await ledger.foldRollupChanges(limit: 1_000) == 0, "nothing was queued")
                if !addedInTheWrite {
                    #expect(try await Self.allRollups(ledger).isEmpty, "the switch leaves every rollup out")
                    try await ledger.rebuildRollups()
                }
                #expect(try await Self.allRollups(ledger) == Self.allRollups(reference))
            }
        }

        /// Every stored rollup of production, sorted; and, checked on the way, the day sums
        /// (schema 18) that reads keeping the currency at most sum instead: they must equal
        /// the stored rollups summed the same way, in every test that reads the rollups here.
        static func allRollups(_ ledger: any Ledger, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [Rollup] {
            let measures = Set(RollupMeasure.allCases)
            let stored = try await ledger.rollups(measures, environment: .production, from: nil, through: 100_000).sorted { $0.key < $1.key }
            for keeping in [RollupDimensions.currency, []] {
                let summed = Rollup.merged(stored.map { Rollup(key: keeping.projecting($0.key), value: $0.value) })
                let read = try await ledger.rollups(measures, environment: .production, from: nil, through: 100_000, keeping: keeping)
                #expect(read.sorted { $0.key < $1.key } == summed, "the day sums, keeping \(keeping.rawValue)", sourceLocation: sourceLocation)
            }
            return stored
        }
    }
}

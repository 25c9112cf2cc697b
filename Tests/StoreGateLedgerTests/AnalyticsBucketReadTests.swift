import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// The metric read summed by bucket in the store (``RollupBucketRead``; PostgreSQL sums in
    /// SQL): every series equals the one the daily read gives (each day's sums bucketed by the
    /// calculator) on the in-memory ledger — weeks and months, ranges cutting a bucket at either
    /// end, every grouping, gauges read at the range's days, amounts per currency, estimated
    /// proceeds at several commissions, totals in a reporting currency.
    @Suite("Analytics: the bucketed read")
    struct AnalyticsBucketRead {
        typealias Story = AnalyticsStory

        /// Ranges: the story's quarter, one cutting weeks and months at both ends, one day, and
        /// one starting before any fact.
        static let ranges: [(from: AnalyticsDay, to: AnalyticsDay)] = [
            (Story.january, Story.today),
            (AnalyticsDay(year: 2026, month: 1, day: 7), AnalyticsDay(year: 2026, month: 2, day: 17)),
            (AnalyticsDay(year: 2026, month: 2, day: 3), AnalyticsDay(year: 2026, month: 2, day: 3)),
            (AnalyticsDay(year: 2025, month: 12, day: 15), AnalyticsDay(year: 2026, month: 1, day: 20)),
        ]

        static let groupings: [AnalyticsGrouping?] = [nil] + AnalyticsGrouping.allCases

        static let commissions: [CommissionRates] = [
            .standard, .smallBusiness, CommissionRates(defaultPerMille: 150, products: ["pro.yearly": 300, "coins": 0]),
            // Above 50 %: read by day (a day's amount may round to no proceeds).
            CommissionRates(defaultPerMille: 700, products: ["pro.monthly": 1000]),
        ]

        @Test("every metric, interval, grouping and range equals the in-memory ledger's daily read", arguments: LedgerBackend.all)
        func everyQuery(backend: LedgerBackend) async throws {
            let reference = InMemoryLedger(configuration: LedgerConfiguration(catalog: Story.catalog))
            try await Story.tell(Story.facts, to: reference)
            try await backend.withLedger(LedgerConfiguration(catalog: Story.catalog)) { ledger async throws in
                try await Story.tell(Story.facts, to: ledger)
                var compared = 0
                for metric in AnalyticsMetric.allCases {
                    for interval in AnalyticsInterval.allCases {
                        for grouping in Self.groupings {
                            for range in Self.ranges {
                                let query = try AnalyticsQuery(metric: metric, from: range.from, to: range.to, interval: interval, groupBy: grouping)
                                let expected = try await reference.seriesFromDailySums(query, today: Story.today)
                                let answered = try await ledger.series(query, today: Story.today)
                                #expect(answered == expected, "\(metric.rawValue) by \(interval.rawValue), \(grouping?.rawValue ?? "-"), \(range.from)…\(range.to)")
                                compared += 1
                            }
                        }
                    }
                }
                #expect(compared == AnalyticsMetric.allCases.count * 3 * Self.groupings.count * Self.ranges.count)
            }
        }

        @Test("estimated proceeds at every commission, and amounts in a reporting currency, equal the daily read", arguments: LedgerBackend.all)
        func proceedsAndRates(backend: LedgerBackend) async throws {
            let reference = InMemoryLedger(configuration: LedgerConfiguration(catalog: Story.catalog))
            try await Story.tell(Story.facts, to: reference)
            let rates = AnalyticsCalculatorOrder.rates
            try await backend.withLedger(LedgerConfiguration(catalog: Story.catalog)) { ledger async throws in
                try await Story.tell(Story.facts, to: ledger)
                for interval in AnalyticsInterval.allCases {
                    for grouping in Self.groupings {
                        for range in Self.ranges.prefix(2) {
                            for commission in Self.commissions {
                                let query = try AnalyticsQuery(
                                    metric: .estimatedProceeds, from: range.from, to: range.to, interval: interval, groupBy: grouping
                                )
                                let expected = try await reference.seriesFromDailySums(query, today: Story.today, commission: commission)
                                #expect(try await ledger.series(query, today: Story.today, commission: commission) == expected)
                            }
                            for metric in AnalyticsMetric.allCases where metric.isAmount {
                                let query = try AnalyticsQuery(metric: metric, from: range.from, to: range.to, interval: interval, groupBy: grouping)
                                let expected = try await reference.seriesFromDailySums(query, today: Story.today, exchangeRates: rates)
                                #expect(try await ledger.series(query, today: Story.today, exchangeRates: rates) == expected, "\(metric.rawValue)")
                            }
                        }
                    }
                }
            }
        }

        @Test("amounts far beyond 2^31 milliunits, and their refunds, sum exactly by day, week and month", arguments: LedgerBackend.all)
        func largeAmounts(backend: LedgerBackend) async throws {
            // PostgreSQL sums amounts as two 31-bit halves (exactSum): prices of billions of
            // milliunits, several a day, make sums whose high half is not zero.
            var facts: [Story.Fact] = []
            for index in 0..<12 {
                let price: Int64 = 3_000_000_000 + Int64(index) * 987_654_321
                let money = Story.money(price, index % 2 == 0 ? "JPY" : "KRW", index % 2 == 0 ? "JPN" : "KOR", reason: "PURCHASE")
                let id = "big-\(index)"
                let purchase = Purchases.transaction(
                    id, product: "coins", type: .consumable, quantity: 1 + index % 3, purchased: Story.at(Double(index / 3)), money: money
                )
                facts.append(.record("whale", Purchases.proof(purchase)))
                if index % 4 == 1 {
                    let refunded = Purchases.transaction(
                        id, product: "coins", type: .consumable, quantity: 1 + index % 3, purchased: Story.at(Double(index / 3)),
                        revoked: Story.at(Double(index / 3) + 1), money: money
                    )
                    facts.append(.notify(Purchases.notification("\(id)-refund", type: "REFUND", signed: Story.at(Double(index / 3) + 1), transaction: refunded)))
                }
            }
            let story = facts
            let reference = InMemoryLedger(configuration: LedgerConfiguration(catalog: Story.catalog))
            try await Story.tell(story, to: reference)
            try await backend.withLedger(LedgerConfiguration(catalog: Story.catalog)) { ledger async throws in
                try await Story.tell(story, to: ledger)
                for interval in AnalyticsInterval.allCases {
                    for grouping in [nil, AnalyticsGrouping.currency] {
                        for metric in [AnalyticsMetric.grossRevenue, .refundAmount, .estimatedProceeds] {
                            let query = try AnalyticsQuery(metric: metric, from: Story.january, to: Story.today, interval: interval, groupBy: grouping)
                            let expected = try await reference.seriesFromDailySums(query, today: Story.today)
                            let answered = try await ledger.series(query, today: Story.today)
                            #expect(answered == expected, "\(metric.rawValue) by \(interval.rawValue), \(grouping?.rawValue ?? "-")")
                            #expect(expected.points.contains { abs($0.amount ?? 0) > Int64(Int32.max) }, "the sums pass 2^31")
                        }
                    }
                }
            }
        }

        @Test("weeks start on Monday and a range cutting them is clipped: new paid subscriptions by week", arguments: LedgerBackend.all)
        func weeks(backend: LedgerBackend) async throws {
            try await backend.withLedger(LedgerConfiguration(catalog: Story.catalog)) { ledger async throws in
                try await Story.tell(Story.facts, to: ledger)
                // 2026-01-01 is a Thursday: the first week is clipped to Thursday–Sunday.
                let january = try await Story.series(ledger, .newPaidSubscriptions, .week, to: AnalyticsDay(year: 2026, month: 1, day: 31))
                #expect(january.points.map(\.start.description) == ["2026-01-01", "2026-01-05", "2026-01-12", "2026-01-19", "2026-01-26"])
                #expect(january.points.map(\.end.description) == ["2026-01-04", "2026-01-11", "2026-01-18", "2026-01-25", "2026-01-31"])
                #expect(Story.counts(january) == [2, 4, 1, 1, 0])
                let cut = try await Story.series(
                    ledger, .newPaidSubscriptions, .week, from: AnalyticsDay(year: 2026, month: 1, day: 7), to: AnalyticsDay(year: 2026, month: 1, day: 13)
                )
                #expect(cut.points.map(\.start.description) == ["2026-01-07", "2026-01-12"])
                #expect(Story.counts(cut) == [2, 1])
            }
        }

        @Test("a gauge is read at the end of each bucket's last day in the range, counting every day before it", arguments: LedgerBackend.all)
        func gaugeAtRangeDays(backend: LedgerBackend) async throws {
            try await backend.withLedger(LedgerConfiguration(catalog: Story.catalog)) { ledger async throws in
                try await Story.tell(Story.facts, to: ledger)
                // The months' ends read by day and by a month cut at the range's end agree.
                let byDay = try await Story.series(ledger, .activeSubscriptions, .day, from: Story.january, to: AnalyticsDay(year: 2026, month: 2, day: 10))
                let cutMonths = try await Story.series(
                    ledger, .activeSubscriptions, .month, from: AnalyticsDay(year: 2026, month: 1, day: 15), to: AnalyticsDay(year: 2026, month: 2, day: 10)
                )
                let dayCounts = Dictionary(uniqueKeysWithValues: byDay.points.map { ($0.start, $0.count ?? -1) })
                #expect(cutMonths.points.map(\.end.description) == ["2026-01-31", "2026-02-10"])
                #expect(Story.counts(cutMonths) == cutMonths.points.map { dayCounts[$0.end] ?? -2 })
                #expect(Story.counts(cutMonths).first == 6)
                // MRR per currency at a range's last day that cuts March.
                let mrr = try await Story.series(ledger, .mrr, .month, from: AnalyticsDay(year: 2026, month: 3, day: 1), to: AnalyticsDay(year: 2026, month: 3, day: 2))
                let whole = try await Story.series(ledger, .mrr, .day, from: AnalyticsDay(year: 2026, month: 3, day: 2), to: AnalyticsDay(year: 2026, month: 3, day: 2))
                #expect(Story.amounts(mrr) == Story.amounts(whole))
            }
        }

        @Test("a read refuses buckets that are missing, unordered, or after the range")
        func refusesBadBuckets() {
            for starts in [[], [5, 5], [5, 3], [5, 12]] as [[Int64]] {
                let refused = #expect(throws: LedgerError.self) {
                    try RollupBucketRead(
                        measures: [.revenue], environment: .production, bucketStarts: starts, through: 10, readsFromStart: false, keeping: []
                    )
                }
                #expect(refused?.code == .invalidArgument)
            }
        }

        @Test("bucket numbers map to their first days; 0 is the days before the range only for a gauge")
        func bucketDays() throws {
            let flow = try RollupBucketRead(measures: [.revenue], environment: .production, bucketStarts: [10, 15, 22], through: 30, readsFromStart: false, keeping: [])
            #expect([0, 1, 2, 3, 4].map { flow.day(ofBucket: $0) } == [nil, 10, 15, 22, nil])
            let gauge = try RollupBucketRead(measures: [.paidStarts], environment: .production, bucketStarts: [10], through: 10, readsFromStart: true, keeping: [])
            #expect([0, 1, 2].map { gauge.day(ofBucket: $0) } == [9, 10, nil])
        }

        @Test("proceeds are summed by bucket only while every rate keeps at least half", arguments: [
            (CommissionRates.standard, true), (.smallBusiness, true), (CommissionRates(defaultPerMille: 500), true),
            (CommissionRates(defaultPerMille: 501), false), (CommissionRates(defaultPerMille: 300, products: ["x": 1000]), false),
        ])
        func proceedsSummable(commission: CommissionRates, summable: Bool) {
            #expect(RollupBucketRead.sumsProceeds(at: commission) == summable)
        }
    }
}

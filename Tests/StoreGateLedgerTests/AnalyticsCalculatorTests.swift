import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// The calculator takes the rollups in whatever order a store returns them, summed over
    /// the dimensions a query does not use or not: the series is the same.
    @Suite("Analytics: the series does not depend on the rows' order or summing")
    struct AnalyticsCalculatorOrder {
        typealias Story = AnalyticsStory

        static let rates = ExchangeRates(reportingCurrency: "USD", rates: [
            "USD": [(Story.january, 1)], "EUR": [(Story.january, 1.08), (AnalyticsDay(Story.january.number + 40), 1.1)],
            "JPY": [(Story.january, 0.0066)],
        ])

        @Test("every metric, interval and grouping: shuffled rows, summed or unsummed, give the series of the summed stored order")
        func anyOrder() async throws {
            let ledger = InMemoryLedger(configuration: LedgerConfiguration(catalog: Story.catalog))
            try await Story.tell(Story.facts, to: ledger)
            var generator = SystemRandomNumberGenerator()
            var compared = 0, withPoints = 0
            for metric in AnalyticsMetric.allCases {
                for interval in AnalyticsInterval.allCases {
                    for grouping in [nil] + AnalyticsGrouping.allCases {
                        for from in [Story.january, AnalyticsDay(Story.january.number + 17)] {
                            let query = try AnalyticsQuery(metric: metric, from: from, to: Story.today, interval: interval, groupBy: grouping)
                            let stored = try await ledger.rollups(
                                query.measures, environment: .production, from: query.readsFromStart ? nil : from.number, through: Story.today.number
                            )
                            let summed = Rollup.merged(stored.map { Rollup(key: query.dimensions.projecting($0.key), value: $0.value) })
                            // The calculator is synchronous: let the other suites' tasks run between queries (the
                            // whole suite shares two cooperative threads on CI).
                            await Task.yield()
                            for rates in [nil, Self.rates] {
                                let expected = AnalyticsCalculator.series(query, rollups: summed, today: Story.today, exchangeRates: rates)
                                if !expected.points.isEmpty { withPoints += 1 }
                                for rows in [summed.shuffled(using: &generator), stored.shuffled(using: &generator)] {
                                    let series = AnalyticsCalculator.series(query, rollups: rows, today: Story.today, exchangeRates: rates)
                                    if rates == nil {
                                        #expect(series == expected, "\(metric) \(interval) \(String(describing: grouping))")
                                    } else {
                                        // Converted totals are sums of doubles: equal to the rounding of the last unit.
                                        #expect(series.points.filter { !$0.isConverted } == expected.points.filter { !$0.isConverted })
                                        #expect(series.ratesUsed == expected.ratesUsed && series.missingRates == expected.missingRates)
                                        let converted = zip(series.points.filter(\.isConverted), expected.points.filter(\.isConverted))
                                        #expect(converted.allSatisfy { abs(($0.amount ?? 0) - ($1.amount ?? 0)) <= 1 && $0.group == $1.group })
                                    }
                                    compared += 1
                                }
                            }
                        }
                    }
                }
            }
            #expect(compared > 500)
            #expect(withPoints > compared / 16, "many queries of the story have points")
        }

        @Test("rows of another environment, or after the range, change nothing")
        func ignoredRows() async throws {
            let ledger = InMemoryLedger(configuration: LedgerConfiguration(catalog: Story.catalog))
            try await Story.tell(Story.facts, to: ledger)
            for metric in [AnalyticsMetric.activeSubscriptions, .mrr, .grossRevenue, .trialConversionRate] {
                let query = try AnalyticsQuery(metric: metric, from: Story.january, to: Story.today, interval: .week, groupBy: .product)
                let stored = try await ledger.rollups(query.measures, environment: .production, from: nil, through: Story.today.number)
                #expect(!stored.isEmpty)
                let expected = AnalyticsCalculator.series(query, rollups: stored, today: Story.today)
                let noise = stored.map { rollup in
                    var sandbox = rollup
                    sandbox.key.environment = .sandbox
                    return sandbox
                } + stored.map { rollup in
                    var later = rollup
                    later.key.day = Story.today.number + 1 + rollup.key.day % 30
                    return later
                }
                #expect(AnalyticsCalculator.series(query, rollups: (stored + noise).shuffled(), today: Story.today) == expected)
            }
        }
    }
}

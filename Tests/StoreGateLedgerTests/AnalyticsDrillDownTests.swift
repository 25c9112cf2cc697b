import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Issue 29 item 6: the transactions behind a metric's point, on every backend — exactly the
    /// hand-picked ones of the seeded story, and for every metric and group, entries that sum to
    /// the point's value.
    @Suite("Analytics: the transactions behind a point")
    struct AnalyticsDrillDownContract {
        typealias Story = AnalyticsStory
        static let february = (AnalyticsDay(year: 2026, month: 2, day: 1), AnalyticsDay(year: 2026, month: 2, day: 28))
        static let january = (AnalyticsDay(year: 2026, month: 1, day: 1), AnalyticsDay(year: 2026, month: 1, day: 31))

        static func ids(
            _ ledger: any Ledger, _ metric: AnalyticsMetric, _ range: (AnalyticsDay, AnalyticsDay),
            groupBy: AnalyticsGrouping? = nil, group: String? = nil, currency: String? = nil
        ) async throws -> [String] {
            let point = try AnalyticsPointQuery(metric: metric, from: range.0, to: range.1, groupBy: groupBy, group: group, currency: currency)
            return try await ledger.analyticsDrillDown(point, limit: 1000).entries.map { "\($0.role.rawValue):\($0.transaction.transactionId)" }
        }

        @Test("a point lists exactly the transactions the hand-computed story puts behind it", arguments: LedgerBackend.all)
        func handPicked(backend: LedgerBackend) async throws {
            try await backend.withLedger(LedgerConfiguration(catalog: Story.catalog)) { ledger async throws in
                try await Story.tell(Story.facts, to: ledger)
                // Churn: billing (yen), a downgraded weekly's end, the receipt-only period.
                #expect(try await Self.ids(ledger, .churned, Self.february) == ["adds:f5-m", "adds:f9-m", "adds:f7-w2"], "by day, then purchase")
                #expect(try await Self.ids(ledger, .churnedBilling, Self.february) == ["adds:f5-m"])
                #expect(try await Self.ids(ledger, .churned, Self.january) == ["adds:f6-m", "adds:f8-1"])
                #expect(try await Self.ids(ledger, .refunds, Self.january) == ["adds:f6-m"])
                #expect(try await Self.ids(ledger, .refunds, Self.february).isEmpty)
                // A gauge: the periods active at the end of the point's last day.
                #expect(try await Self.ids(ledger, .activeSubscriptions, Self.february).sorted() == ["adds:f1-p2", "adds:f3-n", "adds:f4-y", "adds:f8-2"])
                #expect(try await Self.ids(ledger, .activeSubscriptions, Self.february, groupBy: .product, group: "pro.yearly") == ["adds:f4-y"])
                #expect(try await Self.ids(ledger, .mrr, Self.january, currency: "JPY") == ["adds:f5-m"])
                // Money in one currency: the coins are revenue too, the receipt's unpriced period is not.
                #expect(try await Self.ids(ledger, .grossRevenue, Self.february, currency: "USD") == ["adds:f1-p2", "adds:f8-2"])
                #expect(try await Self.ids(ledger, .grossRevenue, Self.february, currency: "EUR") == ["adds:f3-n", "adds:f7-w1", "adds:f7-w2"])
                #expect(try await Self.ids(ledger, .unpricedTransactions, Self.february).isEmpty)
                #expect(try await Self.ids(ledger, .unpricedTransactions, Self.january) == ["adds:f9-m"])
                // A ratio: the conversion, and both trials that ended.
                #expect(try await Self.ids(ledger, .trialConversionRate, Self.january) == ["adds:f1-t", "denominator:f1-t", "denominator:f2-t"])
                #expect(try await Self.ids(ledger, .newTrials, Self.january, groupBy: .storefront, group: "USA") == ["adds:f1-t", "adds:f2-t"])
                #expect(try await Self.ids(ledger, .newTrials, Self.january, groupBy: .storefront, group: "DEU").isEmpty)
                // Proceeds: revenue adds, the refund subtracts.
                let proceeds = try await Self.ids(ledger, .estimatedProceeds, Self.january, currency: "USD")
                #expect(proceeds.contains("subtracts:f6-m") && proceeds.contains("adds:coins-1") && !proceeds.contains("adds:f5-m"))
                // Another environment holds nothing.
                let sandbox = try AnalyticsPointQuery(metric: .grossRevenue, from: Self.january.0, to: Self.january.1, environment: .sandbox)
                #expect(try await ledger.analyticsDrillDown(sandbox, limit: 10).entries.isEmpty)
                // A limit truncates and says so.
                let limited = try await ledger.analyticsDrillDown(try AnalyticsPointQuery(metric: .newPaidSubscriptions, from: Self.january.0, to: Self.january.1), limit: 3)
                #expect(limited.entries.count == 3 && limited.isTruncated)
                let refused = await #expect(throws: LedgerError.self) {
                    try await ledger.analyticsDrillDown(try AnalyticsPointQuery(metric: .mrr, from: Self.january.0, to: Self.january.1), limit: 0)
                }
                #expect(refused?.code == .invalidArgument)
                #expect(throws: LedgerError.self) {
                    try AnalyticsPointQuery(metric: .mrr, from: Self.january.0, to: Self.january.1, group: "USA")
                }
            }
        }

        @Test("for every metric and group, a point's entries sum to the point's value", arguments: LedgerBackend.all)
        func sums(backend: LedgerBackend) async throws {
            try await backend.withLedger(LedgerConfiguration(catalog: Story.catalog)) { ledger async throws in
                try await Story.tell(Story.facts, to: ledger)
                for metric in AnalyticsMetric.allCases {
                    for groupBy in [nil, AnalyticsGrouping.product, .storefront] {
                        let series = try await Story.series(ledger, metric, .month, groupBy: groupBy)
                        for point in series.points where !point.isConverted {
                            let query = try AnalyticsPointQuery(
                                metric: metric, from: point.start, to: point.end, groupBy: groupBy, group: groupBy == nil ? nil : point.group ?? "",
                                currency: point.currency
                            )
                            let entries = try await ledger.analyticsDrillDown(query, limit: 1000).entries
                            func total(_ role: AnalyticsDrillDown.Role, _ figure: KeyPath<RollupValue, Int64>) -> Int64 {
                                entries.filter { $0.role == role }.map { $0.value[keyPath: figure] }.reduce(0, +)
                            }
                            let what = "\(metric) \(groupBy?.rawValue ?? "-") \(point.group ?? "-") \(point.start) \(point.currency ?? "")"
                            switch metric.kind {
                            case .ratio:
                                #expect(total(.adds, \.count) == point.count && total(.denominator, \.count) == point.denominator, "\(what)")
                            case .amount, .gaugeAmount:
                                // Proceeds: each figure net of the product's commission, as the series computes it.
                                let net = { (role: AnalyticsDrillDown.Role) in
                                    entries.filter { $0.role == role }.map { CommissionRates.standard.proceeds(of: $0.value.amount, productId: $0.key.productId) }.reduce(0, +)
                                }
                                if metric == .estimatedProceeds {
                                    // Rounded per transaction here, per rollup there: within a milliunit each.
                                    #expect(abs(net(.adds) - net(.subtracts) - (point.amount ?? 0)) <= Int64(entries.count), "\(what)")
                                } else {
                                    #expect(total(.adds, \.amount) - total(.subtracts, \.amount) == point.amount, "\(what)")
                                }
                            case .count, .gaugeCount:
                                #expect(total(.adds, \.count) - total(.subtracts, \.count) == point.count, "\(what)")
                            }
                        }
                    }
                }
            }
        }
    }
}

import Foundation
import StoreGateCore
import StoreGateLedger
@testable import StoreGateLedgerPostgres
import Testing

extension LedgerTests {
    /// PostgreSQL's bucketed read (``PostgresLedger/rollups(_:)``) on stored rollups no story
    /// writes: a negative figure whose days cancel within a week (summing stored rows straight
    /// into buckets would hide the group: the read notices and reads by day), rows whose figures
    /// are zero (never a group), and proceeds netted per day and product. Each series equals
    /// the daily read of the same ledger.
    @Suite("Analytics on PostgreSQL: the bucketed read of unusual stored rollups", .enabled(if: PostgresForTests.shouldRun))
    struct PostgresBucketRead {
        /// Monday 2026-01-05.
        static let monday = AnalyticsDay(year: 2026, month: 1, day: 5)

        static func row(
            _ measure: RollupMeasure, _ day: Int64, product: String, currency: String, count: Int64, amount: Int64
        ) -> Rollup {
            Rollup(
                key: RollupKey(
                    day: monday.number + day, measure: measure, environment: .production, productId: product, subscriptionGroup: "pro",
                    storefront: currency == "EUR" ? "DEU" : "USA", currency: currency, offer: "none"
                ),
                value: RollupValue(count: count, amount: amount)
            )
        }

        static func insert(_ rows: [Rollup], into ledger: PostgresLedger) async throws {
            let logger = ledger.logger
            try await ledger.withConnection { connection in
                for row in rows {
                    let key = row.key
                    try await PostgresLedger.run(connection, """
                        INSERT INTO ledger_rollups (measure, environment, day, product_id, subscription_group, storefront, currency, offer, count, amount)
                        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
                        """, [
                            .text(key.measure.rawValue), .text(key.environment.rawValue), .integer(key.day), .text(key.productId),
                            .text(key.subscriptionGroup), .text(key.storefront), .text(key.currency), .text(key.offer),
                            .integer(row.value.count), .integer(row.value.amount),
                        ], logger: logger)
                }
            }
        }

        static func compareEverySeries(_ ledger: PostgresLedger, metrics: [AnalyticsMetric], commission: CommissionRates = .standard) async throws {
            let today = AnalyticsDay(monday.number + 40)
            for metric in metrics {
                for interval in AnalyticsInterval.allCases {
                    for grouping in [nil, .product, .currency, .storefront] as [AnalyticsGrouping?] {
                        for from in [AnalyticsDay(monday.number - 3), AnalyticsDay(monday.number + 1)] {
                            let query = try AnalyticsQuery(metric: metric, from: from, to: today, interval: interval, groupBy: grouping)
                            let daily = try await ledger.seriesFromDailySums(query, today: today, commission: commission)
                            let bucketed = try await ledger.series(query, today: today, commission: commission)
                            #expect(bucketed == daily, "\(metric.rawValue) by \(interval.rawValue), \(grouping?.rawValue ?? "-") from \(from)")
                        }
                    }
                }
            }
        }

        @Test("a negative figure cancelling within a week: the group stays, as in the daily read")
        func negativeFigure() async throws {
            try await LedgerBackend.postgres.withLedger { any in
                let ledger = try #require(any as? PostgresLedger)
                try await Self.insert([
                    Self.row(.revenue, 1, product: "pro.monthly", currency: "USD", count: 1, amount: 1000),
                    Self.row(.revenue, 2, product: "pro.monthly", currency: "USD", count: -1, amount: -1000),
                    Self.row(.revenue, 1, product: "pro.yearly", currency: "EUR", count: 2, amount: 29_980),
                    Self.row(.refunds, 9, product: "pro.yearly", currency: "EUR", count: 1, amount: 14_990),
                    Self.row(.paidStarts, -10, product: "pro.monthly", currency: "USD", count: 3, amount: 29_970),
                    Self.row(.paidEnds, 3, product: "pro.monthly", currency: "USD", count: 1, amount: 9990),
                ], into: ledger)
                let week = try await ledger.series(
                    try AnalyticsQuery(metric: .grossRevenue, from: Self.monday, to: AnalyticsDay(Self.monday.number + 6), interval: .week, groupBy: .product),
                    today: AnalyticsDay(Self.monday.number + 40)
                )
                // pro.monthly's week sums to zero, but its days did not: it is reported, at 0.
                #expect(week.points.map { "\($0.group ?? "-") \($0.currency ?? "-") \($0.amount ?? -1)" } == ["pro.monthly USD 0", "pro.yearly EUR 29980"])
                try await Self.compareEverySeries(ledger, metrics: [.grossRevenue, .refundAmount, .estimatedProceeds, .mrr, .activeSubscriptions])
            }
        }

        @Test("rows whose figures are zero make no group; proceeds are rounded per day and product")
        func zeroRowsAndProceeds() async throws {
            try await LedgerBackend.postgres.withLedger { any in
                let ledger = try #require(any as? PostgresLedger)
                try await Self.insert([
                    Self.row(.revenue, 0, product: "coins", currency: "EUR", count: 0, amount: 0),
                    Self.row(.newPaid, 4, product: "coins", currency: "EUR", count: 0, amount: 0),
                    // 1 milliunit a day: 0.7 rounds to 1 each day (0.85 at 15 %), 2 days make 2, not 1.4 → 1.
                    Self.row(.revenue, 1, product: "pro.monthly", currency: "USD", count: 1, amount: 1),
                    Self.row(.revenue, 2, product: "pro.monthly", currency: "USD", count: 1, amount: 1),
                    Self.row(.revenue, 2, product: "pro.yearly", currency: "USD", count: 1, amount: 5),
                    Self.row(.newPaid, 4, product: "pro.monthly", currency: "USD", count: 2, amount: 0),
                ], into: ledger)
                let week = try await ledger.series(
                    try AnalyticsQuery(metric: .estimatedProceeds, from: Self.monday, to: AnalyticsDay(Self.monday.number + 6), interval: .week),
                    today: AnalyticsDay(Self.monday.number + 40)
                )
                #expect(week.points.map { "\($0.currency ?? "-") \($0.amount ?? -1)" } == ["USD 6"])
                let paid = try await ledger.series(
                    try AnalyticsQuery(metric: .newPaidSubscriptions, from: Self.monday, to: AnalyticsDay(Self.monday.number + 6), interval: .week, groupBy: .product),
                    today: AnalyticsDay(Self.monday.number + 40)
                )
                #expect(paid.points.map { "\($0.group ?? "-") \($0.count ?? -1)" } == ["pro.monthly 2"])
                for commission in [CommissionRates.standard, CommissionRates(defaultPerMille: 150, products: ["pro.yearly": 300])] {
                    try await Self.compareEverySeries(ledger, metrics: [.estimatedProceeds, .grossRevenue, .newPaidSubscriptions], commission: commission)
                }
            }
        }
    }
}

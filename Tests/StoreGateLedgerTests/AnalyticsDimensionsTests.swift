import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// The summing read a metric makes (`rollups(…, keeping:)`): the backends sum in SQL what
    /// the stored rollups summed in Swift would give.
    @Suite("Analytics: rollups summed over the dimensions a query does not use")
    struct AnalyticsDimensions {
        static let measures = Set(RollupMeasure.allCases)
        static let through = AnalyticsStory.today.number + 400

        @Test("the summed read equals the stored rollups summed in Swift, for each set of dimensions", arguments: LedgerBackend.all)
        func summed(backend: LedgerBackend) async throws {
            try await backend.withLedger(LedgerConfiguration(catalog: AnalyticsStory.catalog)) { ledger async throws in
                try await AnalyticsStory.tell(AnalyticsStory.facts, to: ledger)
                let stored = try await ledger.rollups(Self.measures, environment: .production, from: nil, through: Self.through)
                let keepings: [RollupDimensions] = [[], .currency, [.currency, .product], .storefront, .offer, .subscriptionGroup, .all]
                for keeping in keepings {
                    let summed = try await ledger.rollups(Self.measures, environment: .production, from: nil, through: Self.through, keeping: keeping)
                    let expected = Rollup.merged(stored.map { Rollup(key: keeping.projecting($0.key), value: $0.value) })
                    #expect(summed.count == expected.count, "one row per measure, day and kept values (\(keeping.rawValue))")
                    #expect(Rollup.merged(summed) == expected, "keeping \(keeping.rawValue)")
                }
                #expect(Set(stored.map(\.key.storefront)).count > 2, "the story has several storefronts to sum over")
            }
        }

        @Test("the summed read keeps to its days, measures and environment", arguments: LedgerBackend.all)
        func bounds(backend: LedgerBackend) async throws {
            try await backend.withLedger(LedgerConfiguration(catalog: AnalyticsStory.catalog)) { ledger async throws in
                try await AnalyticsStory.tell(AnalyticsStory.facts, to: ledger)
                let first = AnalyticsStory.january.number + 10, last = AnalyticsStory.january.number + 40
                let window = try await ledger.rollups([.paidStarts, .revenue], environment: .production, from: first, through: last, keeping: [])
                #expect(!window.isEmpty)
                #expect(window.allSatisfy { (first...last).contains($0.key.day) && [.paidStarts, .revenue].contains($0.key.measure) })
                #expect(window.allSatisfy { $0.key.productId.isEmpty && $0.key.storefront.isEmpty && $0.key.currency.isEmpty && $0.key.offer.isEmpty })
                let sandbox = try await ledger.rollups(Self.measures, environment: .sandbox, from: nil, through: Self.through, keeping: .all)
                #expect(sandbox.isEmpty)
                let before = try await ledger.rollups(Self.measures, environment: .production, from: nil, through: AnalyticsStory.january.number - 1, keeping: [])
                #expect(before.isEmpty)
            }
        }
    }
}

import Foundation
public import StoreGateCore

/// The daily analytics rollups (``AnalyticsStore``), kept in the actor.
extension InMemoryLedger {
    public func rollups(
        _ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64
    ) async throws(LedgerError) -> [Rollup] {
        _ = try scanKeys()
        return rollupSums
            .filter { measures.contains($0.key.measure) && $0.key.environment == environment && $0.key.day <= through && $0.key.day >= (from ?? .min) }
            .map { Rollup(key: $0.key, value: $0.value) }
            .sorted { $0.key < $1.key }
    }

    public func analyticsDrillDown(_ point: AnalyticsPointQuery, limit: Int) async throws(LedgerError) -> AnalyticsDrillDown {
        try checkOpen()
        try AnalyticsPointQuery.check(limit: limit)
        var families: [(transactions: [RecordedTransaction], renewal: RenewalRow?)] = []
        var truncated = false
        for key in familyKeysWithTransactions where key.environment == point.environment {
            let rows = familyTransactionKeys(key).compactMap { transactionRow($0)?.value }
            guard rows.contains(where: point.touches) else { continue }
            guard families.count < AnalyticsPointQuery.maximumFamilies else {
                truncated = true
                break
            }
            families.append((rows, renewal(of: key)))
        }
        return AnalyticsDrillDown.make(point, families: families, limit: limit, truncated: truncated)
    }

    @discardableResult
    public func rebuildRollups() async throws(LedgerError) -> RollupRebuild {
        _ = try scanKeys()
        var accumulator = RollupAccumulator()
        for key in familyKeysWithTransactions {
            let rows = (familyTransactionKeys(key)).compactMap { transactionRow($0)?.value }
            accumulator.add(family: rows, renewal: renewal(of: key))
        }
        rollupSums = Dictionary(uniqueKeysWithValues: accumulator.rollups.map { ($0.key, $0.value) })
        return accumulator.report
    }
}

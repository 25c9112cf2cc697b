import Foundation
public import StoreGateCore

/// The daily analytics rollups a ledger keeps in step with its transactions
/// (`FamilyRollup`): read by the metrics (``AnalyticsCalculator``), and rebuilt from the raw
/// transactions by `storegate analytics rebuild`. Every backend has it (``Ledger`` refines it).
public protocol AnalyticsStore: Sendable {
    /// The stored rollups of `measures` in `environment` from day `from` (every earlier day
    /// when `nil`: gauges sum from the start) through day `through`, days counted from 1970 in
    /// UTC. Rollups whose figures are zero are left out.
    func rollups(
        _ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64
    ) async throws(LedgerError) -> [Rollup]

    /// The transactions behind one point of a metric, with the figure each adds: read from
    /// the stored transactions (whole families around the point's days, at most
    /// ``AnalyticsPointQuery/maximumFamilies``) by the rules the rollups follow, so the
    /// entries sum to the point's value.
    ///
    /// - Parameters:
    ///   - point: The point.
    ///   - limit: At most this many entries, 1...10,000.
    /// - Throws: ``LedgerError/Code/invalidArgument`` for a limit out of range, or a storage error.
    func analyticsDrillDown(_ point: AnalyticsPointQuery, limit: Int) async throws(LedgerError) -> AnalyticsDrillDown

    /// The same rollups summed over the dimensions not in `keeping` (read as empty strings):
    /// one per measure, day and kept values; sums whose figures are zero are left out. What
    /// a metric reads (``AnalyticsQuery/dimensions``): the backends sum in SQL, so a metric over
    /// two years reads hundreds of rows rather than every stored key.
    func rollups(
        _ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64, keeping: RollupDimensions
    ) async throws(LedgerError) -> [Rollup]

    /// The rollups one metric query reads, summed over the dimensions not kept and over the
    /// days of each bucket (``RollupBucketRead``): one row per measure, bucket and kept values,
    /// dated on the bucket's first day (the days before the range, read for a gauge, on the day
    /// before it). A bucket's row exists when one of its days has a non-zero sum (as in
    /// ``rollups(_:environment:from:through:keeping:)``). A backend may also answer with the
    /// daily sums (each dated its own day): the calculator places every row in its bucket.
    /// What ``series(_:today:commission:exchangeRates:)`` reads; PostgreSQL sums in SQL.
    func rollups(_ read: RollupBucketRead) async throws(LedgerError) -> [Rollup]

    /// Folds the rollup changes writes queued (`RollupChanges`, schema 17) into the rollups:
    /// the oldest `limit` of them, merged, added and deleted in one transaction, so each counts
    /// exactly once whatever fails or runs at the same time.
    ///
    /// Every read of the rollups above folds first, so it sees every write committed before
    /// it; `storegate serve` also folds every second (`RollupFoldService`), so the SQL views
    /// stay at most that far behind. A backend that adds a write's changes as it writes them
    /// has nothing queued (the default).
    ///
    /// - Parameter limit: The most queued changes (one per write) folded in this call.
    /// - Returns: How many were folded: fewer than `limit` when the queue is now empty.
    @discardableResult
    func foldRollupChanges(limit: Int) async throws(LedgerError) -> Int

    /// Recomputes every rollup from the stored transactions and renewal infos, replacing the
    /// stored ones in one transaction (writes wait meanwhile).
    ///
    /// - Returns: What was read and written.
    @discardableResult
    func rebuildRollups() async throws(LedgerError) -> RollupRebuild
}

extension AnalyticsStore {
    /// Nothing is queued: the changes were added as they were written.
    @discardableResult
    public func foldRollupChanges(limit: Int) async throws(LedgerError) -> Int { 0 }

    /// Folds every queued change, `batch` per transaction (what a read does first).
    ///
    /// - Returns: How many were folded.
    @discardableResult
    package func foldAllRollupChanges(batch: Int = RollupChanges.foldBatch) async throws(LedgerError) -> Int {
        var total = 0
        while true {
            let folded = try await foldRollupChanges(limit: batch)
            total += folded
            if folded < batch { return total }
        }
    }
}

extension AnalyticsPointQuery {
    /// The most entries one drill-down returns.
    public static let maximumEntries = 10_000

    /// Refuses a drill-down limit out of 1...``maximumEntries``.
    package static func check(limit: Int) throws(LedgerError) {
        guard (1...maximumEntries).contains(limit) else {
            throw LedgerError(.invalidArgument, reason: "a drill-down lists 1...\(maximumEntries) entries, got \(limit)")
        }
    }
}

extension AnalyticsStore {
    /// Reads every stored rollup and sums over the dimensions not kept (a backend without a
    /// summing query).
    public func rollups(
        _ measures: Set<RollupMeasure>, environment: AppStoreEnvironment, from: Int64?, through: Int64, keeping: RollupDimensions
    ) async throws(LedgerError) -> [Rollup] {
        let stored = try await rollups(measures, environment: environment, from: from, through: through)
        guard keeping != .all else { return stored }
        return Rollup.merged(stored.map { Rollup(key: keeping.projecting($0.key), value: $0.value) })
    }
}

/// What ``AnalyticsStore/rebuildRollups()`` did.
public struct RollupRebuild: Sendable, Hashable, Codable {
    /// Purchase families read.
    public var families: Int
    /// Transactions read.
    public var transactions: Int
    /// Rollups written.
    public var rollups: Int

    /// Creates a value.
    public init(families: Int, transactions: Int, rollups: Int) {
        self.families = families
        self.transactions = transactions
        self.rollups = rollups
    }
}

/// Sums family contributions into rollups, for a rebuild that reads families one at a time.
package struct RollupAccumulator: Sendable {
    package private(set) var sums: [RollupKey: RollupValue] = [:]
    package private(set) var families = 0
    package private(set) var transactions = 0

    package init() {}

    /// Adds one family's contributions.
    package mutating func add(family rows: [RecordedTransaction], renewal: RenewalRow?) {
        guard !rows.isEmpty else { return }
        families += 1
        transactions += rows.count
        for (key, value) in FamilyRollup.contributions(rows, renewal: renewal) {
            sums[key, default: RollupValue(count: 0)].add(value)
        }
    }

    /// The non-zero sums, sorted by key.
    package var rollups: [Rollup] {
        sums.filter { !$0.value.isZero }.map { Rollup(key: $0.key, value: $0.value) }.sorted { $0.key < $1.key }
    }

    /// The report of a rebuild that wrote ``rollups``.
    package var report: RollupRebuild {
        RollupRebuild(families: families, transactions: transactions, rollups: sums.values.filter { !$0.isZero }.count)
    }
}

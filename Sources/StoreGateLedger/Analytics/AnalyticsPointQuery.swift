public import Foundation
public import StoreGateCore

/// One point of a metric's series, to explain: the metric, the bucket's days, and the group
/// (and currency) the point stands for. ``AnalyticsStore/analyticsDrillDown(_:limit:)`` lists
/// the transactions behind it.
public struct AnalyticsPointQuery: Sendable, Hashable {
    /// The metric.
    public var metric: AnalyticsMetric
    /// The bucket's first day (UTC), inclusive.
    public var from: AnalyticsDay
    /// The bucket's last day (UTC), inclusive. A gauge's point is its value at the end of this day.
    public var to: AnalyticsDay
    /// The environment whose transactions count.
    public var environment: AppStoreEnvironment
    /// What the series was split by, with ``group``; `nil` for an ungrouped series.
    public var groupBy: AnalyticsGrouping?
    /// The point's group (empty: unknown, as the series reports it); set exactly when ``groupBy`` is.
    public var group: String?
    /// Amounts only: the point's currency; `nil` lists every currency.
    public var currency: String?

    /// The most purchase families one drill-down reads (the rest is reported as truncated).
    public static let maximumFamilies = 5_000

    /// Creates a point query.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` when `to` is before `from`, the range
    ///   spans more than ``AnalyticsQuery/maximumDays``, or `group` is given without `groupBy`
    ///   (or the other way round).
    public init(
        metric: AnalyticsMetric, from: AnalyticsDay, to: AnalyticsDay, environment: AppStoreEnvironment = .production,
        groupBy: AnalyticsGrouping? = nil, group: String? = nil, currency: String? = nil
    ) throws(LedgerError) {
        guard from <= to else { throw LedgerError(.invalidArgument, reason: "the range ends (\(to)) before it begins (\(from))") }
        guard to.number - from.number < AnalyticsQuery.maximumDays else {
            throw LedgerError(.invalidArgument, reason: "a range spans at most \(AnalyticsQuery.maximumDays) days")
        }
        guard (groupBy == nil) == (group == nil) else {
            throw LedgerError(.invalidArgument, reason: "a point's group and what the series is grouped by come together")
        }
        self.metric = metric
        self.from = from
        self.to = to
        self.environment = environment
        self.groupBy = groupBy
        self.group = group
        self.currency = metric.isAmount ? currency : nil
    }

    /// Whether the metric is a gauge: its point counts what is active at the end of ``to``.
    public var isGauge: Bool { metric.kind == .gaugeCount || metric.kind == .gaugeAmount }

    /// The transactions a backend reads, whole families around them: those whose purchase
    /// comes before `upper` and whose coverage (purchase, expiry or revocation, the latest)
    /// reaches `lower`. Every figure of a family is dated within the coverage of one of its
    /// transactions, so no family contributing to the point is left out.
    public var window: (lower: Date, upper: Date) {
        let upper = AnalyticsDay(to.number + 1).date
        return (isGauge ? upper : from.date, upper)
    }

    /// Whether `transaction` lies in ``window`` (the in-memory backend's filter; the SQL
    /// backends state the same condition).
    public func touches(_ transaction: RecordedTransaction) -> Bool {
        let (lower, upper) = window
        let reach = max(transaction.purchaseDate, transaction.expiresDate ?? transaction.purchaseDate, transaction.revocationDate ?? transaction.purchaseDate)
        return transaction.purchaseDate < upper && reach >= lower
    }
}

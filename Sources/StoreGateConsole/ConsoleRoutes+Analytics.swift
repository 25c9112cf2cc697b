import Foundation
import Hummingbird
import StoreGateCore
import StoreGateLedger

/// The Overview (issue 29 item 6): the money and subscriber metrics of `GET /v1/analytics`
/// charted over a range, split by a group, each point opening the transactions behind it;
/// below, the ledger's activity counts of the last 90 days.
extension Console {
    /// The metrics charted, in order; amounts get one chart per currency.
    static let chartedMetrics: [AnalyticsMetric] = [
        .activeSubscriptions, .mrr, .newTrials, .trialConversions, .newPaidSubscriptions, .churned, .refunds, .grossRevenue,
    ]

    /// The most bars a chart draws (a longer range needs a longer interval).
    static let maximumBuckets = 400
    /// The most entries a drill-down page lists.
    static let drillDownLimit = 1_000

    static func title(_ metric: AnalyticsMetric) -> String {
        switch metric {
        case .activeSubscriptions: "Active subscriptions"
        case .activeTrials: "Active trials"
        case .mrr: "MRR"
        case .newTrials: "New trials"
        case .trialConversions: "Trial conversions"
        case .trialConversionRate: "Trial conversion rate"
        case .newPaidSubscriptions: "New paid subscriptions"
        case .renewals: "Renewals"
        case .churned: "Churned subscriptions"
        case .churnedVoluntary: "Churned (voluntary)"
        case .churnedBilling: "Churned (billing)"
        case .reactivations: "Reactivations"
        case .refunds: "Refunds"
        case .refundAmount: "Refunded amount"
        case .grossRevenue: "Gross revenue"
        case .estimatedProceeds: "Estimated proceeds"
        case .unpricedTransactions: "Transactions without a known price"
        }
    }

    // MARK: The controls

    /// A choice in one of the form's selects.
    struct Option: Sendable {
        let value: String
        let label: String
        let selected: Bool
    }

    /// What the overview's form asked for, checked.
    struct ChartSettings: Sendable {
        var preset: String
        var from: AnalyticsDay
        var to: AnalyticsDay
        var interval: AnalyticsInterval
        var groupBy: AnalyticsGrouping?
        var environment: AppStoreEnvironment
        /// Whether from/to came from the form (not a preset).
        var isCustom: Bool
        /// Whether the interval was chosen (else it fits the range).
        var isIntervalChosen: Bool
    }

    static let presets: [(value: String, label: String)] = [("30d", "Last 30 days"), ("90d", "Last 90 days"), ("12m", "Last 12 months"), ("custom", "From – to")]

    /// A query parameter, `nil` when absent or empty (a form's blank field).
    static func parameter(_ request: Request, _ name: String) -> String? {
        guard let value = request.uri.queryParameters.get(name), !value.isEmpty else { return nil }
        return value
    }

    /// The environments the form offers: the accepted ones, production first.
    func chartEnvironments() -> [AppStoreEnvironment] {
        model.settings.environments.sorted { ($0 == .production ? 0 : 1, $0.rawValue) < ($1 == .production ? 0 : 1, $1.rawValue) }
    }

    func environmentParameter(_ request: Request) throws(ConsoleParameterError) -> AppStoreEnvironment {
        let known = chartEnvironments()
        guard let text = Self.parameter(request, "environment") else { return known.first ?? .production }
        guard let environment = known.first(where: { $0.rawValue == text }) else {
            throw ConsoleParameterError("environment", "is one of \(known.map(\.rawValue).joined(separator: ", "))")
        }
        return environment
    }

    static func dayParameter(_ request: Request, _ name: String) throws(ConsoleParameterError) -> AnalyticsDay? {
        guard let text = parameter(request, name) else { return nil }
        guard let day = AnalyticsDay(parsing: text), day.number >= 0 else { throw ConsoleParameterError(name, "is a date, YYYY-MM-DD, from 1970-01-01 on") }
        return day
    }

    static func choice<T: RawRepresentable & CaseIterable>(_ request: Request, _ name: String, _ type: T.Type) throws(ConsoleParameterError) -> T? where T.RawValue == String {
        guard let text = parameter(request, name) else { return nil }
        guard let value = T(rawValue: text) else { throw ConsoleParameterError(name, "is one of \(T.allCases.map(\.rawValue).joined(separator: ", "))") }
        return value
    }

    /// The overview's settings from its query: a preset range (30 days, 90 days, 12 months)
    /// unless `from`/`to` are given; an interval fitting the range unless one is chosen.
    func chartSettings(_ request: Request, today: AnalyticsDay) throws(ConsoleParameterError) -> ChartSettings {
        let preset = Self.parameter(request, "range") ?? "90d"
        guard Self.presets.contains(where: { $0.value == preset }) else {
            throw ConsoleParameterError("range", "is one of \(Self.presets.map(\.value).joined(separator: ", "))")
        }
        let from = try Self.dayParameter(request, "from")
        let to = try Self.dayParameter(request, "to")
        let interval = try Self.choice(request, "interval", AnalyticsInterval.self)
        let groupBy = try Self.choice(request, "groupBy", AnalyticsGrouping.self)
        let environment = try environmentParameter(request)
        // Dates make the range custom, unless the form showed a custom range (`was`) and its
        // select was turned to a preset: the dates it still holds are the old view's.
        let leftCustom = Self.parameter(request, "was") == "custom" && preset != "custom"
        let isCustom = preset == "custom" || ((from != nil || to != nil) && !leftCustom)
        let end = isCustom ? to ?? today : today
        let start: AnalyticsDay
        switch isCustom ? "custom" : preset {
        case "custom": start = from ?? AnalyticsDay(end.number - 89)
        case "30d": start = AnalyticsDay(end.number - 29)
        case "12m":
            let (year, month, _) = end.civil
            start = month == 12 ? AnalyticsDay(year: year, month: 1, day: 1) : AnalyticsDay(year: year - 1, month: month + 1, day: 1)
        default: start = AnalyticsDay(end.number - 89)
        }
        guard start <= end else { throw ConsoleParameterError("from", "comes before 'to' (\(start) is after \(end))") }
        let span = end.number - start.number + 1
        let chosen = interval ?? (span <= 62 ? .day : span <= 200 ? .week : .month)
        let settings = ChartSettings(
            preset: isCustom ? "custom" : preset, from: start, to: end, interval: chosen, groupBy: groupBy, environment: environment, isCustom: isCustom,
            isIntervalChosen: interval != nil
        )
        let bars = Self.buckets(from: start, through: min(end, max(today, start)), chosen).count
        guard bars <= Self.maximumBuckets else {
            throw ConsoleParameterError("interval", "would draw \(bars) bars; choose a longer interval or a shorter range (at most \(Self.maximumBuckets))")
        }
        return settings
    }

    /// The buckets of a series from `from` through `through` (clipped to both), as the calculator makes them.
    static func buckets(from: AnalyticsDay, through: AnalyticsDay, _ interval: AnalyticsInterval) -> [(start: AnalyticsDay, end: AnalyticsDay)] {
        var result: [(start: AnalyticsDay, end: AnalyticsDay)] = []
        var start = from
        while start <= through, result.count <= maximumBuckets {
            let next = start.nextBucket(interval)
            result.append((start, min(AnalyticsDay(next.number - 1), through)))
            start = next
        }
        return result
    }

    // MARK: The overview

    struct OverviewPage: Sendable {
        let layout: Layout
        let days: Int
        let charts: [ConsoleViews.Chart]
        let metricCharts: [ConsoleCharts.MetricChart]
        let rangeText: String
        let preset: String
        let rangeOptions: [Option]
        let from: String
        let to: String
        let intervalOptions: [Option]
        let groupOptions: [Option]
        let environmentOptions: [Option]
        let reportingNote: String?
    }

    @Sendable func overview(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        let now = model.now()
        let today = AnalyticsDay(now)
        let settings: ChartSettings
        do throws(ConsoleParameterError) {
            settings = try chartSettings(request, today: today)
        } catch {
            return errorPage(.badRequest, "Not a valid request", error.message, context)
        }
        let activity: [DailyActivity]
        var metricCharts: [ConsoleCharts.MetricChart] = []
        do throws(LedgerError) {
            for metric in Self.chartedMetrics {
                let query = try AnalyticsQuery(
                    metric: metric, from: settings.from, to: settings.to, interval: settings.interval, groupBy: settings.groupBy,
                    environment: settings.environment
                )
                let series = try await model.series(query, today: today)
                metricCharts += Self.charts(series, settings: settings, today: today)
            }
            activity = try await model.activity(days: Self.overviewDays, endingAt: now)
        } catch {
            return ledgerFailure(error, context)
        }
        let options = { (values: [(String, String)], selected: String) in values.map { Option(value: $0.0, label: $0.1, selected: $0.0 == selected) } }
        let through = min(settings.to, today)
        return page("overview", OverviewPage(
            layout: layout("Overview", context, section: .overview), days: Self.overviewDays, charts: ConsoleViews.charts(activity),
            metricCharts: metricCharts,
            rangeText: "\(settings.from) to \(through) (UTC), per \(settings.interval.rawValue)"
                + (settings.groupBy.map { ", by \($0.rawValue.replacingOccurrences(of: "_", with: " "))" } ?? "") + ", \(settings.environment.rawValue)",
            preset: settings.preset, rangeOptions: options(Self.presets.map { ($0.value, $0.label) }, settings.preset),
            from: settings.isCustom ? settings.from.description : "", to: settings.isCustom ? settings.to.description : "",
            intervalOptions: options([("", "fitting the range (\(settings.interval.rawValue))")] + AnalyticsInterval.allCases.map { ($0.rawValue, $0.rawValue) },
                                     settings.isIntervalChosen ? settings.interval.rawValue : ""),
            groupOptions: options([("", "nothing")] + AnalyticsGrouping.allCases.map { ($0.rawValue, $0.rawValue.replacingOccurrences(of: "_", with: " ")) },
                                  settings.groupBy?.rawValue ?? ""),
            environmentOptions: options(chartEnvironments().map { ($0.rawValue, $0.rawValue) }, settings.environment.rawValue),
            reportingNote: nil
        ))
    }

    /// A series' charts: one, or one per currency for an amount.
    static func charts(_ series: AnalyticsSeries, settings: ChartSettings, today: AnalyticsDay) -> [ConsoleCharts.MetricChart] {
        let metric = series.query.metric
        let spans = buckets(from: settings.from, through: min(settings.to, today), settings.interval)
        let isGauge = metric.kind == .gaugeCount || metric.kind == .gaugeAmount
        let subtitle = isGauge ? "at the end of each \(settings.interval.rawValue)" : "per \(settings.interval.rawValue)"
        let points = series.points.filter { !$0.isConverted }
        let currencies: [String?] = metric.isAmount ? Array(Set(points.map { $0.currency ?? "" })).sorted().map { Optional($0) } : [nil]
        var charts: [ConsoleCharts.MetricChart] = []
        for currency in currencies {
            let mine = points.filter { !metric.isAmount || ($0.currency ?? "") == currency }
            let found: [String?] = Array(Set(mine.map { $0.group ?? "" })).sorted().map { Optional($0) }
            let groups: [String?] = settings.groupBy == nil || found.isEmpty ? [nil] : found
            var index: [String: [String: Double]] = [:]
            for point in mine { index[point.start.description, default: [:]][point.group ?? ""] = point.value }
            let buckets = spans.map { span in
                ConsoleCharts.Bucket(start: span.start, end: span.end, values: groups.map { index[span.start.description]?[$0 ?? ""] })
            }
            let totals = buckets.map { $0.values.reduce(0) { $0 + ($1 ?? 0) } }
            let format = { (value: Double) in metric.isAmount ? "\(currency ?? "") \(ConsoleCharts.money(value))" : ConsoleCharts.count(value) }
            let headline = isGauge
                ? "\(format(totals.last ?? 0)) at the end of \(spans.last?.end.description ?? settings.to.description)"
                : "\(format(totals.reduce(0, +))) in the range"
            let unpriced = metric.isAmount ? (series.unpricedTransactions ?? 0) : 0
            charts.append(ConsoleCharts.chart(
                id: "chart-\(metric.rawValue)\(currency.map { "-\($0)" } ?? "")",
                title: Self.title(metric) + (currency.map { " · \($0)" } ?? ""), subtitle: subtitle, headline: headline,
                note: unpriced > 0 ? "\(unpriced) transaction(s) in the range have no known price and are left out (never guessed)." : nil,
                unit: metric.isAmount ? (currency ?? "") : (metric == .activeSubscriptions ? "subscriptions" : "count"), isAmount: metric.isAmount,
                interval: settings.interval, groups: groups, buckets: buckets,
                target: .init(metric: metric, environment: settings.environment, groupBy: groups == [nil] ? nil : settings.groupBy, currency: currency)
            ))
        }
        if charts.isEmpty {
            // An amount with no priced transaction in the range: an empty chart says so.
            charts.append(ConsoleCharts.chart(
                id: "chart-\(metric.rawValue)", title: Self.title(metric), subtitle: subtitle, headline: "no priced transactions",
                note: (series.unpricedTransactions ?? 0) > 0 ? "\(series.unpricedTransactions ?? 0) transaction(s) in the range have no known price." : nil,
                unit: "amount", isAmount: true, interval: settings.interval, groups: [nil],
                buckets: spans.map { ConsoleCharts.Bucket(start: $0.start, end: $0.end, values: [nil]) },
                target: .init(metric: metric, environment: settings.environment, groupBy: nil, currency: nil)
            ))
        }
        return charts
    }
}

/// A console query parameter that is not valid: which, and what it must be.
struct ConsoleParameterError: Error, Sendable {
    let field: String
    let reason: String

    init(_ field: String, _ reason: String) {
        self.field = field
        self.reason = reason
    }

    var message: String { "'\(field)' \(reason)." }
}

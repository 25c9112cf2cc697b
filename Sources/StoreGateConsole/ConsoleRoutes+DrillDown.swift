import Foundation
import Hummingbird
import StoreGateCore
import StoreGateLedger

/// `GET /console/analytics/{metric}?from=&to=&environment=&groupBy=&group=&currency=`: the
/// transactions behind one point of an Overview chart, each linking to its account and to its
/// transaction page (with its stored proof).
extension Console {
    struct DrillDownPage: Sendable {
        struct Row: Sendable {
            let day: String
            let countedAs: String
            let role: String
            let tone: String
            let transactionId: String
            let transactionLink: String
            let account: String
            let accountLink: String?
            let productId: String
            let storefront: String
            let offer: String
            let figure: String
        }

        let layout: Layout
        let title: String
        let point: String
        let summary: String
        let formula: String
        let rows: [Row]
        let hasRows: Bool
        let truncated: String?
        let back: String
    }

    /// What a rollup measure counts, in words.
    static func words(_ measure: RollupMeasure) -> String {
        switch measure {
        case .revenue: "sale (price × quantity)"
        case .unpriced: "transaction without a known price"
        case .refunds: "refund or revocation"
        case .paidStarts: "paid period"
        case .paidEnds: "paid period ended"
        case .trialStarts: "free trial began"
        case .trialEnds: "free trial ended"
        case .conversions: "trial converted"
        case .newPaid: "first paid period"
        case .renewals: "renewal"
        case .reactivations: "reactivation"
        case .churnVoluntary: "churned (renewal turned off)"
        case .churnBilling: "churned (billing failed)"
        case .churnRefund: "churned (refunded)"
        case .churnOther: "churned (lapsed)"
        }
    }

    @Sendable func analyticsPoint(_ request: Request, context: some ConsoleRequestContext) async throws -> Response {
        let name: String
        do {
            name = try Self.pathParameter("metric", context)
        } catch {
            return errorPage(.badRequest, "Not a valid request", "The metric in the address is not valid percent-encoded text.", context)
        }
        guard let metric = AnalyticsMetric(rawValue: name) else {
            return errorPage(.notFound, "No such metric", "There is no metric '\(name.prefix(64))'; see docs/analytics.md.", context)
        }
        let from: AnalyticsDay, to: AnalyticsDay, groupBy: AnalyticsGrouping?, environment: AppStoreEnvironment
        do throws(ConsoleParameterError) {
            guard let first = try Self.dayParameter(request, "from"), let last = try Self.dayParameter(request, "to") else {
                throw ConsoleParameterError("from", "and 'to' name the point's days, YYYY-MM-DD")
            }
            (from, to) = (first, last)
            groupBy = try Self.choice(request, "groupBy", AnalyticsGrouping.self)
            environment = try environmentParameter(request)
        } catch {
            return errorPage(.badRequest, "Not a valid request", error.message, context)
        }
        // The group may be empty (an unknown storefront, say): present, not absent.
        let group = request.uri.queryParameters.get("group")
        let currency = Self.parameter(request, "currency")
        let point: AnalyticsPointQuery
        let drillDown: AnalyticsDrillDown
        do throws(LedgerError) {
            point = try AnalyticsPointQuery(metric: metric, from: from, to: to, environment: environment, groupBy: groupBy, group: groupBy == nil ? nil : group, currency: currency)
            if groupBy == nil, group != nil {
                throw LedgerError(.invalidArgument, reason: "'group' needs 'groupBy': what the series is grouped by")
            }
            drillDown = try await model.analyticsDrillDown(point, limit: Self.drillDownLimit)
        } catch {
            return ledgerFailure(error, context)
        }
        let rows = drillDown.entries.map { entry in
            let transaction = entry.transaction
            let figure: String
            if metric.isAmount {
                figure = "\(entry.key.currency) \(ConsoleCharts.money(Double(entry.value.amount) / 1000))"
            } else if entry.key.measure == .paidStarts, entry.value.amount != 0 {
                figure = "\(entry.value.count) (\(entry.key.currency) \(ConsoleCharts.money(Double(entry.value.amount) / 1000)) a month)"
            } else {
                figure = "\(entry.value.count)"
            }
            return DrillDownPage.Row(
                day: AnalyticsDay(entry.key.day).description, countedAs: Self.words(entry.key.measure),
                role: entry.role == .adds ? "+" : entry.role == .subtracts ? "−" : "denominator",
                tone: entry.role == .adds ? "good" : entry.role == .subtracts ? "bad" : "neutral",
                transactionId: transaction.transactionId, transactionLink: ConsoleViews.transactionLink(transaction.environment, transaction.transactionId),
                account: transaction.account?.rawValue ?? "unclaimed", accountLink: transaction.account.map(ConsoleViews.accountLink),
                productId: transaction.productId, storefront: entry.key.storefront.isEmpty ? "unknown" : entry.key.storefront,
                offer: entry.key.offer, figure: figure
            )
        }
        let isGauge = point.isGauge
        var place = isGauge ? "at the end of \(to)" : from == to ? "on \(from)" : "from \(from) to \(to)"
        if let groupBy { place += ", \(groupBy.rawValue.replacingOccurrences(of: "_", with: " ")) \(ConsoleCharts.groupName(group))" }
        if let currency = point.currency { place += ", \(currency)" }
        place += " (\(environment.rawValue))"
        let adds = drillDown.entries.filter { $0.role == .adds }
        let summary: String
        switch metric.kind {
        case .ratio:
            let denominator = drillDown.entries.filter { $0.role == .denominator }.count
            summary = "\(adds.count) of \(denominator)" + (denominator > 0 ? String(format: " (%.1f %%)", 100 * Double(adds.count) / Double(denominator)) : "")
        case .amount, .gaugeAmount:
            var sums: [String: Int64] = [:]
            for entry in drillDown.entries { sums[entry.key.currency, default: 0] += entry.role == .subtracts ? -entry.value.amount : entry.value.amount }
            summary = sums.sorted { $0.key < $1.key }.map { "\($0.key) \(ConsoleCharts.money(Double($0.value) / 1000))" }.joined(separator: ", ")
                + (metric == .estimatedProceeds ? " before Apple's commission" : "")
        default:
            summary = "\(adds.reduce(0) { $0 + $1.value.count } - drillDown.entries.filter { $0.role == .subtracts }.reduce(0) { $0 + $1.value.count })"
        }
        var back = "/console?environment=\(ConsoleViews.segment(environment.rawValue))"
        if let groupBy { back += "&groupBy=\(groupBy.rawValue)" }
        let plus = metric.measures.plus.map(Self.words).joined(separator: ", ")
        let minus = metric.measures.minus.map(Self.words).joined(separator: ", ")
        let formula = isGauge
            ? "Counted: each \(plus) that began on or before \(to) and ends after it."
            : "Counted: " + plus + (minus.isEmpty ? "" : metric.kind == .ratio ? "; out of: \(minus)" : "; less: \(minus)") + ", dated in the range."
        return page("drilldown", DrillDownPage(
            layout: layout("\(Self.title(metric)): transactions", context, section: .overview), title: Self.title(metric), point: place,
            summary: drillDown.entries.isEmpty ? "nothing" : summary, formula: formula, rows: rows, hasRows: !rows.isEmpty,
            truncated: drillDown.isTruncated ? "Showing the first \(rows.count) entries; there are more." : nil, back: back
        ))
    }
}

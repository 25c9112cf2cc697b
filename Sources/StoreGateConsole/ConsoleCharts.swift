import Foundation
import StoreGateCore
import StoreGateLedger

/// The Overview's money and subscriber charts: one metric each, drawn on the server as inline
/// SVG (bars, stacked by group when the series is grouped) with axes and their labels, a
/// `<title>` and a `<desc>` summing it up, and a table of the same values. Every bar and every
/// table cell links to the transactions behind it (`/console/analytics/{metric}`). No script,
/// no inline style: the stylesheet colours the classes.
enum ConsoleCharts {
    /// One bucket of the series: its days and each group's figure.
    struct Bucket: Sendable {
        let start: AnalyticsDay
        let end: AnalyticsDay
        /// Per group (in ``MetricChart`` group order), the figure; `nil` when none was reported.
        var values: [Double?]
    }

    struct LegendItem: Sendable {
        let name: String
        let swatch: String
    }

    struct Cell: Sendable {
        let text: String
        let link: String
    }

    struct Row: Sendable {
        let period: String
        let cells: [Cell]
    }

    struct Header: Sendable {
        let name: String
    }

    /// What the overview template renders for one chart.
    struct MetricChart: Sendable {
        let id: String
        let title: String
        let subtitle: String
        let headline: String
        let note: String?
        let svg: String
        let legend: [LegendItem]
        let hasLegend: Bool
        let headers: [Header]
        let rows: [Row]
    }

    /// Where a point's transactions are listed.
    struct DrillTarget: Sendable {
        let metric: AnalyticsMetric
        let environment: AppStoreEnvironment
        let groupBy: AnalyticsGrouping?
        let currency: String?

        func link(_ bucket: Bucket, group: String?) -> String {
            var items = [("from", bucket.start.description), ("to", bucket.end.description), ("environment", environment.rawValue)]
            if let groupBy { items += [("groupBy", groupBy.rawValue), ("group", group ?? "")] }
            if let currency { items.append(("currency", currency)) }
            return "/console/analytics/\(metric.rawValue)?" + items.map { "\($0.0)=\(ConsoleViews.segment($0.1))" }.joined(separator: "&")
        }
    }

    static let palette = 8

    /// A chart of `buckets` (each with one figure per group of `groups`; `[nil]` for an
    /// ungrouped series).
    ///
    /// - Parameters:
    ///   - unit: The y axis's title (`subscriptions`, `USD`).
    ///   - isAmount: Figures are money (two decimals) rather than counts.
    static func chart(
        id: String, title: String, subtitle: String, headline: String, note: String?, unit: String, isAmount: Bool,
        interval: AnalyticsInterval, groups: [String?], buckets: [Bucket], target: DrillTarget
    ) -> MetricChart {
        let width = 640.0, height = 260.0, left = 66.0, right = 16.0, top = 16.0, bottom = 54.0
        let plotWidth = width - left - right, plotHeight = height - top - bottom
        let totals = buckets.map { $0.values.reduce(0) { $0 + max($1 ?? 0, 0) } }
        let ceiling = niceCeiling(totals.max() ?? 0, integral: !isAmount)
        let y = { (value: Double) in top + plotHeight - plotHeight * value / ceiling }
        let label = { (value: Double) in isAmount ? money(value) : count(value) }
        let titleId = "\(id)-title", descId = "\(id)-desc"
        var described: [String] = []
        for bucket in buckets {
            var figures: [String] = []
            for (group, value) in zip(groups, bucket.values) {
                figures.append(groups.count == 1 && group == nil ? label(value ?? 0) : "\(groupName(group)) \(label(value ?? 0))")
            }
            described.append(period(bucket, interval) + " " + figures.joined(separator: ", "))
        }
        let summary = "\(title), \(subtitle): " + described.joined(separator: "; ")
        var svg = """
            <svg class="metric-chart" viewBox="0 0 \(Int(width)) \(Int(height))" role="group" aria-labelledby="\(titleId) \(descId)">\
            <title id="\(titleId)">\(ConsoleViews.escape(title))</title><desc id="\(descId)">\(ConsoleViews.escape(summary))</desc>
            """
        // The y axis: gridlines and labels at 0, half and the top.
        for fraction in [0.0, 0.5, 1.0] {
            let value = ceiling * fraction
            svg += """
                <line class="gridline" x1="\(f(left))" y1="\(f(y(value)))" x2="\(f(width - right))" y2="\(f(y(value)))"/>\
                <text class="tick" x="\(f(left - 6))" y="\(f(y(value) + 5))">\(ConsoleViews.escape(compact(value, isAmount: isAmount)))</text>
                """
        }
        svg += """
            <line class="axis" x1="\(f(left))" y1="\(f(top))" x2="\(f(left))" y2="\(f(top + plotHeight))"/>\
            <line class="axis" x1="\(f(left))" y1="\(f(top + plotHeight))" x2="\(f(width - right))" y2="\(f(top + plotHeight))"/>\
            <text class="axis-title" transform="translate(16 \(f(top + plotHeight / 2))) rotate(-90)">\(ConsoleViews.escape(unit))</text>\
            <text class="axis-title x" x="\(f(left + plotWidth / 2))" y="\(f(height - 6))">\(ConsoleViews.escape(axisTitle(interval)))</text>
            """
        // The bars: one slot per bucket, segments stacked in group order, each a link.
        let slot = plotWidth / Double(max(buckets.count, 1))
        let barWidth = max(slot * 0.72, 1)
        for (index, bucket) in buckets.enumerated() {
            let x = left + Double(index) * slot + (slot - barWidth) / 2
            var base = 0.0
            for (groupIndex, group) in groups.enumerated() {
                guard let value = bucket.values[groupIndex], value > 0 else { continue }
                let name = groups.count == 1 && group == nil ? "" : "\(groupName(group)): "
                svg += """
                    <a href="\(ConsoleViews.escape(target.link(bucket, group: group)))" tabindex="-1">\
                    <rect class="s\(groupIndex % palette)" x="\(f(x))" y="\(f(y(base + value)))" width="\(f(barWidth))" height="\(f(max(y(base) - y(base + value), 0.5)))">\
                    <title>\(ConsoleViews.escape("\(period(bucket, interval)) · \(name)\(label(value))"))</title></rect></a>
                    """
                base += value
            }
        }
        // The x axis: at most six dates, evenly spaced.
        let stride = max(1, Int((Double(buckets.count) / 6).rounded(.up)))
        for index in Swift.stride(from: 0, to: buckets.count, by: stride) {
            let x = left + (Double(index) + 0.5) * slot
            svg += "<text class=\"tick x\" x=\"\(f(x))\" y=\"\(f(top + plotHeight + 16))\">\(ConsoleViews.escape(short(buckets[index].start, interval)))</text>"
        }
        svg += "</svg>"

        let legend = groups.count > 1 || groups.first.flatMap({ $0 }) != nil
            ? groups.enumerated().map { LegendItem(name: groupName($0.element), swatch: "s\($0.offset % palette)") }
            : []
        let headers = groups.count == 1 && groups[0] == nil ? [Header(name: unit)] : groups.map { Header(name: groupName($0)) }
        let rows = buckets.map { bucket in
            Row(period: period(bucket, interval), cells: zip(groups, bucket.values).map { group, value in
                Cell(text: label(value ?? 0), link: target.link(bucket, group: group))
            })
        }
        return MetricChart(
            id: id, title: title, subtitle: subtitle, headline: headline, note: note, svg: svg, legend: legend, hasLegend: !legend.isEmpty,
            headers: headers, rows: rows
        )
    }

    // MARK: Words and numbers

    static func groupName(_ group: String?) -> String {
        guard let group else { return "all" }
        return group.isEmpty ? "unknown" : group
    }

    static func period(_ bucket: Bucket, _ interval: AnalyticsInterval) -> String {
        switch interval {
        case .day: return bucket.start.description
        case .week: return "week of \(bucket.start.description)"
        case .month: return String(bucket.start.description.prefix(7))
        }
    }

    static func short(_ day: AnalyticsDay, _ interval: AnalyticsInterval) -> String {
        interval == .month ? String(day.description.prefix(7)) : day.description
    }

    static func axisTitle(_ interval: AnalyticsInterval) -> String {
        switch interval {
        case .day: return "day (UTC)"
        case .week: return "week starting (UTC, Monday)"
        case .month: return "month (UTC)"
        }
    }

    static func count(_ value: Double) -> String { String(Int64(value.rounded())) }

    static func money(_ value: Double) -> String { String(format: "%.2f", value) }

    /// An axis label: 1.5k, 2M, or the number.
    static func compact(_ value: Double, isAmount: Bool) -> String {
        let magnitude = abs(value)
        func trimmed(_ number: Double, _ suffix: String) -> String {
            var text = String(format: "%.1f", number)
            if text.hasSuffix(".0") { text.removeLast(2) }
            return text + suffix
        }
        if magnitude >= 1_000_000 { return trimmed(value / 1_000_000, "M") }
        if magnitude >= 10_000 { return trimmed(value / 1000, "k") }
        if isAmount, magnitude < 10, value != value.rounded() { return String(format: "%.2f", value) }
        return trimmed(value, "")
    }

    /// The smallest 1, 2, 2.5 or 5 × 10ⁿ at least `value` (at least 1; for counts, whole and even
    /// so half of it is whole too).
    static func niceCeiling(_ value: Double, integral: Bool) -> Double {
        guard value > 0, value.isFinite else { return integral ? 2 : 1 }
        let power = pow(10, (log10(value)).rounded(.down))
        for step in [1.0, 2, 2.5, 5, 10] where step * power >= value {
            let nice = step * power
            if integral { return max(2, (nice / 2).rounded(.up) * 2) }
            return nice
        }
        return value
    }

    private static func f(_ value: Double) -> String { String(format: "%.1f", value) }
}

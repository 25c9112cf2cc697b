/// Computes a metric's series from the daily rollups (``AnalyticsStore``): pure, the same for
/// every backend. docs/analytics.md states each metric's formula.
///
/// One pass over the rows, in the order they come: each row's bucket is read from a table of
/// the range's days, and its (group, currency) identity becomes a slot number once (a
/// one-entry cache catches the runs of equal identities the stores' `GROUP BY` order gives),
/// so the figures are summed into flat arrays of slot × bucket — no sorting of the rows, no
/// dictionary per row. A gauge sums each bucket's changes and then runs through the buckets.
/// Only totals in a reporting currency, whose floating-point sums depend on the order they
/// are added in, read the rows in day order (as they always did).
public enum AnalyticsCalculator {
    /// The series answering `query`.
    ///
    /// - Parameters:
    ///   - query: What is asked.
    ///   - rollups: The stored rollups of ``AnalyticsQuery/measures`` in the query's
    ///     environment, through `query.to` (from the start for a gauge, else from `query.from`),
    ///     in any order.
    ///   - today: Today (UTC): later days are not reported (their facts are scheduled, not
    ///     known: a subscription's end, say).
    ///   - commission: Apple's commission, for estimated proceeds.
    ///   - exchangeRates: Rates for totals in a reporting currency, when the team gave them.
    public static func series(
        _ query: AnalyticsQuery, rollups: [Rollup], today: AnalyticsDay, commission: CommissionRates = .standard,
        exchangeRates: ExchangeRates? = nil
    ) -> AnalyticsSeries {
        series(query, rollups: rollups, today: today, commission: commission, exchangeRates: exchangeRates, amountsAreProceeds: false)
    }

    /// The series answering `query`, from rollups whose amounts are already estimated proceeds
    /// when `amountsAreProceeds` (``RollupBucketRead/proceeds``: rounded per daily rollup by
    /// the store) — so they are not netted again.
    package static func series(
        _ query: AnalyticsQuery, rollups: [Rollup], today: AnalyticsDay, commission: CommissionRates, exchangeRates: ExchangeRates?,
        amountsAreProceeds: Bool
    ) -> AnalyticsSeries {
        var answered = query
        let through = min(query.to, today)
        answered.to = max(through, query.from)
        var series = AnalyticsSeries(
            query: answered, points: [], unpricedTransactions: query.metric.isAmount ? 0 : nil,
            reportingCurrency: query.metric.isAmount ? exchangeRates?.reportingCurrency : nil, ratesUsed: [], missingRates: []
        )
        guard through >= query.from else { return series }
        let buckets = Self.buckets(from: query.from, through: through, interval: query.interval)
        let metric = query.metric
        let plus = Set(metric.measures.plus), minus = Set(metric.measures.minus)
        let fx = metric.isAmount ? exchangeRates : nil
        var ratesUsed: Set<AnalyticsSeries.RateUsed> = []
        var missing: Set<String> = []

        func convert(_ amount: Int64, _ currency: String, on day: AnalyticsDay) -> Double? {
            guard let fx else { return nil }
            guard let found = fx.rate(of: currency, on: day) else {
                if amount != 0 { missing.insert(currency) }
                return nil
            }
            if currency != fx.reportingCurrency, amount != 0 {
                ratesUsed.insert(AnalyticsSeries.RateUsed(currency: currency, day: found.day, rate: found.rate))
            }
            return Double(amount) * found.rate
        }

        let first = query.from.number, last = through.number
        // The bucket of each day of the range (buckets cover it without a gap).
        var bucketOfDay = [Int](repeating: 0, count: Int(last - first + 1))
        for (index, bucket) in buckets.enumerated() {
            for day in bucket.start.number...bucket.end.number { bucketOfDay[Int(day - first)] = index }
        }
        var table = SeriesTable(query: query, buckets: buckets.count)
        var proceeds = ProceedsCache(commission: commission)
        /// The figure a rollup adds: its count, or its amount (proceeds net of the commission).
        func amount(_ rollup: Rollup) -> Int64 {
            metric == .estimatedProceeds && !amountsAreProceeds ? proceeds.proceeds(of: rollup.value.amount, productId: rollup.key.productId) : rollup.value.amount
        }

        switch metric.kind {
        case .gaugeCount, .gaugeAmount:
            // Each bucket's changes (every day before the range counts in the first), then the
            // running totals at each bucket's end.
            for rollup in rollups where rollup.key.environment == query.environment && rollup.key.day <= last {
                let sign: Int64 = plus.contains(rollup.key.measure) ? 1 : minus.contains(rollup.key.measure) ? -1 : 0
                guard sign != 0 else { continue }
                let cell = table.cell(table.slot(rollup.key), rollup.key.day < first ? 0 : bucketOfDay[Int(rollup.key.day - first)])
                table.counts[cell] += sign * rollup.value.count
                table.amounts[cell] += sign * amount(rollup)
            }
            table.runTotals(seeingAmounts: metric.isAmount)
            let order = table.order(includingEmptyTotal: !metric.isAmount && query.groupBy == nil)
            for (index, bucket) in buckets.enumerated() {
                var converted: [String?: Double] = [:]
                for (id, slot) in order {
                    let cell = slot.map { table.cell($0, index) }
                    if metric.isAmount {
                        let value = cell.map { table.amounts[$0] } ?? 0
                        series.points.append(.init(start: bucket.start, end: bucket.end, group: id.group, currency: id.currency, amount: value))
                        if let money = convert(value, id.currency ?? "", on: bucket.end) { converted[id.group, default: 0] += money }
                    } else {
                        series.points.append(.init(
                            start: bucket.start, end: bucket.end, group: id.group, currency: nil, count: cell.map { table.counts[$0] } ?? 0
                        ))
                    }
                }
                if let fx { series.points += Self.convertedPoints(converted, bucket: bucket, currency: fx.reportingCurrency) }
            }
        case .count, .amount, .ratio:
            var converted: [Int: [String?: Double]] = [:]
            // Sums in a reporting currency are added in day order, as they always were.
            let rows = fx == nil ? rollups : rollups.sorted { $0.key.day < $1.key.day }
            for rollup in rows where rollup.key.environment == query.environment && rollup.key.day >= first && rollup.key.day <= last {
                if rollup.key.measure == .unpriced, metric.isAmount, metric != .unpricedTransactions {
                    series.unpricedTransactions = (series.unpricedTransactions ?? 0) + rollup.value.count
                    continue
                }
                let sign: Int64 = plus.contains(rollup.key.measure) ? 1 : minus.contains(rollup.key.measure) ? -1 : 0
                guard sign != 0 else { continue }
                let bucket = bucketOfDay[Int(rollup.key.day - first)]
                let slot = table.slot(rollup.key)
                if !metric.isAmount || rollup.value.amount != 0 { table.seen[slot] = true }
                let cell = table.cell(slot, bucket)
                if metric.kind == .ratio {
                    if sign > 0 { table.counts[cell] += rollup.value.count } else { table.denominators[cell] += rollup.value.count }
                } else {
                    table.counts[cell] += sign * rollup.value.count
                    let figure = sign * amount(rollup)
                    table.amounts[cell] += figure
                    if fx != nil, let money = convert(figure, rollup.key.currency, on: AnalyticsDay(rollup.key.day)) {
                        converted[bucket, default: [:]][table.identities[slot].group, default: 0] += money
                    }
                }
            }
            let order = table.order(includingEmptyTotal: !metric.isAmount && query.groupBy == nil)
            for (index, bucket) in buckets.enumerated() {
                for (id, slot) in order {
                    let cell = slot.map { table.cell($0, index) }
                    let count = cell.map { table.counts[$0] } ?? 0
                    switch metric.kind {
                    case .ratio:
                        let denominator = cell.map { table.denominators[$0] } ?? 0
                        series.points.append(.init(start: bucket.start, end: bucket.end, group: id.group, currency: nil, count: count, denominator: denominator))
                    case .amount:
                        let value = cell.map { table.amounts[$0] } ?? 0
                        series.points.append(.init(start: bucket.start, end: bucket.end, group: id.group, currency: id.currency, count: count, amount: value))
                    default:
                        series.points.append(.init(start: bucket.start, end: bucket.end, group: id.group, currency: nil, count: count))
                    }
                }
                if let fx { series.points += Self.convertedPoints(converted[index] ?? [:], bucket: bucket, currency: fx.reportingCurrency) }
            }
        }
        series.ratesUsed = ratesUsed.sorted()
        series.missingRates = missing.sorted()
        return series
    }

    /// The buckets of `interval` from `from` through `through`, clipped to them.
    static func buckets(from: AnalyticsDay, through: AnalyticsDay, interval: AnalyticsInterval) -> [(start: AnalyticsDay, end: AnalyticsDay)] {
        var result: [(start: AnalyticsDay, end: AnalyticsDay)] = []
        var start = from
        while start <= through {
            let next = start.nextBucket(interval)
            result.append((start, min(AnalyticsDay(next.number - 1), through)))
            start = next
        }
        return result
    }

    private static func convertedPoints(_ totals: [String?: Double], bucket: (start: AnalyticsDay, end: AnalyticsDay), currency: String) -> [AnalyticsSeries.Point] {
        totals.sorted { ($0.key ?? "") < ($1.key ?? "") }.map { group, total in
            AnalyticsSeries.Point(
                start: bucket.start, end: bucket.end, group: group, currency: currency,
                amount: Int64(total.rounded(.toNearestOrAwayFromZero)), isConverted: true
            )
        }
    }
}

/// What one series point is split by: the group's value and, for an amount, the currency.
private struct SeriesIdentity: Hashable, Comparable {
    var group: String?
    var currency: String?

    static func < (lhs: SeriesIdentity, rhs: SeriesIdentity) -> Bool { (lhs.group ?? "", lhs.currency ?? "") < (rhs.group ?? "", rhs.currency ?? "") }
}

/// The figures of a series as flat arrays of identity slot × bucket.
private struct SeriesTable {
    let grouping: AnalyticsGrouping?
    let keepsCurrency: Bool
    let bucketCount: Int
    private(set) var identities: [SeriesIdentity] = []
    private var slots: [SeriesIdentity: Int] = [:]
    /// The slot of the identity asked last (rows come in runs of one identity or cycle through few).
    private var last = -1
    var seen: [Bool] = []
    var counts: [Int64] = []
    var amounts: [Int64] = []
    var denominators: [Int64] = []
    /// Up to this many identities, a lookup compares them in place instead of hashing.
    static let scanned = 16

    init(query: AnalyticsQuery, buckets: Int) {
        grouping = query.groupBy
        keepsCurrency = query.metric.isAmount
        bucketCount = buckets
    }

    func cell(_ slot: Int, _ bucket: Int) -> Int { slot * bucketCount + bucket }

    /// The slot of `key`'s identity, added on first sight.
    mutating func slot(_ key: RollupKey) -> Int {
        let group = grouping?.value(of: key)
        let currency = keepsCurrency ? key.currency : nil
        if last >= 0, identities[last].group == group, identities[last].currency == currency { return last }
        // A few identities (the usual case) are compared in place; more go through a dictionary.
        if identities.count <= Self.scanned {
            if let found = identities.firstIndex(where: { $0.group == group && $0.currency == currency }) {
                last = found
                return found
            }
        } else if let found = slots[SeriesIdentity(group: group, currency: currency)] {
            last = found
            return found
        }
        let identity = SeriesIdentity(group: group, currency: currency)
        let slot = identities.count
        identities.append(identity)
        slots[identity] = slot
        seen.append(false)
        counts += repeatElement(0, count: bucketCount)
        amounts += repeatElement(0, count: bucketCount)
        denominators += repeatElement(0, count: bucketCount)
        last = slot
        return slot
    }

    /// Turns each slot's per-bucket changes into running totals, marking seen the slots whose
    /// total (the amount when `seeingAmounts`, else the count) is not zero at some bucket's end.
    mutating func runTotals(seeingAmounts: Bool) {
        for slot in identities.indices {
            let start = cell(slot, 0)
            var count: Int64 = 0, amount: Int64 = 0, nonZero = false
            for index in start..<(start + bucketCount) {
                count += counts[index]
                amount += amounts[index]
                counts[index] = count
                amounts[index] = amount
                if (seeingAmounts ? amount : count) != 0 { nonZero = true }
            }
            seen[slot] = nonZero
        }
    }

    /// The identities to report, sorted, each with its slot: the seen ones, or — for an
    /// ungrouped count that saw none (`includingEmptyTotal`) — one total of zeros.
    func order(includingEmptyTotal: Bool) -> [(identity: SeriesIdentity, slot: Int?)] {
        let shown = identities.indices.filter { seen[$0] }.map { (identity: identities[$0], slot: Optional($0)) }
        if shown.isEmpty && includingEmptyTotal { return [(SeriesIdentity(group: nil, currency: nil), nil)] }
        return shown.sorted { $0.identity < $1.identity }
    }
}

/// ``CommissionRates/proceeds(of:productId:)`` with the last product's rate remembered.
private struct ProceedsCache {
    let commission: CommissionRates
    private var product: String?
    private var perMille = 0

    init(commission: CommissionRates) {
        self.commission = commission
    }

    mutating func proceeds(of amount: Int64, productId: String) -> Int64 {
        if product != productId {
            product = productId
            perMille = commission.perMille(for: productId)
        }
        return CommissionRates.proceeds(of: amount, perMille: perMille)
    }
}

extension AnalyticsStore {
    /// Reads the rollups `query` needs, summed over the dimensions it does not use, and
    /// computes its series (``AnalyticsCalculator``).
    ///
    /// - Throws: A storage error.
    public func series(
        _ query: AnalyticsQuery, today: AnalyticsDay, commission: CommissionRates = .standard, exchangeRates: ExchangeRates? = nil
    ) async throws(LedgerError) -> AnalyticsSeries {
        let through = min(query.to, today)
        guard through >= query.from else {
            return AnalyticsCalculator.series(query, rollups: [], today: today, commission: commission, exchangeRates: exchangeRates)
        }
        let read = try query.bucketRead(through: through, commission: commission, exchangeRates: exchangeRates)
        let rollups = try await rollups(read)
        return AnalyticsCalculator.series(
            query, rollups: rollups, today: today, commission: commission, exchangeRates: exchangeRates, amountsAreProceeds: read.proceeds != nil
        )
    }

    /// The series of `query` from the daily sums (``rollups(_:environment:from:through:keeping:)``),
    /// the calculator placing each day in its bucket: what ``series(_:today:commission:exchangeRates:)``
    /// read before the stores summed buckets, kept to compare the two (`bench analytics --compare-daily-read`).
    ///
    /// - Throws: A storage error.
    public func seriesFromDailySums(
        _ query: AnalyticsQuery, today: AnalyticsDay, commission: CommissionRates = .standard, exchangeRates: ExchangeRates? = nil
    ) async throws(LedgerError) -> AnalyticsSeries {
        let through = min(query.to, today)
        let rollups = through < query.from ? [] : try await rollups(
            query.measures, environment: query.environment, from: query.readsFromStart ? nil : query.from.number, through: through.number,
            keeping: query.dimensions
        )
        return AnalyticsCalculator.series(query, rollups: rollups, today: today, commission: commission, exchangeRates: exchangeRates)
    }
}

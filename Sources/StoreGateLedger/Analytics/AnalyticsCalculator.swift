/// Computes a metric's series from the daily rollups (``AnalyticsStore``): pure, the same for
/// every backend. docs/analytics.md states each metric's formula.
public enum AnalyticsCalculator {
    /// The series answering `query`.
    ///
    /// - Parameters:
    ///   - query: What is asked.
    ///   - rollups: The stored rollups of ``AnalyticsQuery/measures`` in the query's
    ///     environment, through `query.to` (from the start for a gauge, else from `query.from`).
    ///   - today: Today (UTC): later days are not reported (their facts are scheduled, not
    ///     known: a subscription's end, say).
    ///   - commission: Apple's commission, for estimated proceeds.
    ///   - exchangeRates: Rates for totals in a reporting currency, when the team gave them.
    public static func series(
        _ query: AnalyticsQuery, rollups: [Rollup], today: AnalyticsDay, commission: CommissionRates = .standard,
        exchangeRates: ExchangeRates? = nil
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

        struct Identity: Hashable, Comparable {
            var group: String?
            var currency: String?
            static func < (lhs: Identity, rhs: Identity) -> Bool { (lhs.group ?? "", lhs.currency ?? "") < (rhs.group ?? "", rhs.currency ?? "") }
        }
        func identity(_ key: RollupKey) -> Identity {
            Identity(group: query.groupBy?.value(of: key), currency: metric.isAmount ? key.currency : nil)
        }
        /// The figure a rollup adds: its count, or its amount (proceeds net of the commission).
        func amount(_ rollup: Rollup) -> Int64 {
            metric == .estimatedProceeds ? commission.proceeds(of: rollup.value.amount, productId: rollup.key.productId) : rollup.value.amount
        }
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

        let sorted = rollups.filter { $0.key.environment == query.environment }.sorted { $0.key.day < $1.key.day }
        let bucketOfDay: (Int64) -> Int? = { day in
            var low = 0, high = buckets.count
            while low < high {
                let middle = (low + high) / 2
                if buckets[middle].end.number < day { low = middle + 1 } else { high = middle }
            }
            return low < buckets.count && buckets[low].start.number <= day ? low : nil
        }

        switch metric.kind {
        case .gaugeCount, .gaugeAmount:
            var running: [Identity: (count: Int64, amount: Int64)] = [:]
            var index = 0
            var seen: Set<Identity> = []
            var perBucket: [[Identity: (count: Int64, amount: Int64)]] = []
            for bucket in buckets {
                while index < sorted.count, sorted[index].key.day <= bucket.end.number {
                    let rollup = sorted[index]
                    index += 1
                    let sign: Int64 = plus.contains(rollup.key.measure) ? 1 : minus.contains(rollup.key.measure) ? -1 : 0
                    guard sign != 0 else { continue }
                    let id = identity(rollup.key)
                    var value = running[id] ?? (0, 0)
                    value.count += sign * rollup.value.count
                    value.amount += sign * amount(rollup)
                    running[id] = value
                }
                for (id, value) in running where metric.isAmount ? value.amount != 0 : value.count != 0 { seen.insert(id) }
                perBucket.append(running)
            }
            if seen.isEmpty && !metric.isAmount && query.groupBy == nil { seen.insert(Identity(group: nil, currency: nil)) }
            for (bucket, values) in zip(buckets, perBucket) {
                var converted: [String?: Double] = [:]
                for id in seen.sorted() {
                    let value = values[id] ?? (0, 0)
                    if metric.isAmount {
                        series.points.append(.init(start: bucket.start, end: bucket.end, group: id.group, currency: id.currency, amount: value.amount))
                        if let money = convert(value.amount, id.currency ?? "", on: bucket.end) { converted[id.group, default: 0] += money }
                    } else {
                        series.points.append(.init(start: bucket.start, end: bucket.end, group: id.group, currency: nil, count: value.count))
                    }
                }
                if let fx { series.points += Self.convertedPoints(converted, bucket: bucket, currency: fx.reportingCurrency) }
            }
        case .count, .amount, .ratio:
            var sums: [Int: [Identity: (count: Int64, amount: Int64, denominator: Int64)]] = [:]
            var converted: [Int: [String?: Double]] = [:]
            var seen: Set<Identity> = []
            for rollup in sorted where rollup.key.day >= query.from.number && rollup.key.day <= through.number {
                if rollup.key.measure == .unpriced, metric.isAmount, metric != .unpricedTransactions {
                    series.unpricedTransactions = (series.unpricedTransactions ?? 0) + rollup.value.count
                    continue
                }
                let sign: Int64 = plus.contains(rollup.key.measure) ? 1 : minus.contains(rollup.key.measure) ? -1 : 0
                guard sign != 0, let bucket = bucketOfDay(rollup.key.day) else { continue }
                let id = identity(rollup.key)
                if !metric.isAmount || rollup.value.amount != 0 { seen.insert(id) }
                var value = sums[bucket]?[id] ?? (0, 0, 0)
                if metric.kind == .ratio {
                    if sign > 0 { value.count += rollup.value.count } else { value.denominator += rollup.value.count }
                } else {
                    value.count += sign * rollup.value.count
                    let figure = sign * amount(rollup)
                    value.amount += figure
                    if let money = convert(figure, rollup.key.currency, on: AnalyticsDay(rollup.key.day)) {
                        converted[bucket, default: [:]][id.group, default: 0] += money
                    }
                }
                sums[bucket, default: [:]][id] = value
            }
            if seen.isEmpty && !metric.isAmount && query.groupBy == nil { seen.insert(Identity(group: nil, currency: nil)) }
            for (index, bucket) in buckets.enumerated() {
                for id in seen.sorted() {
                    let value = sums[index]?[id] ?? (0, 0, 0)
                    switch metric.kind {
                    case .ratio:
                        series.points.append(.init(start: bucket.start, end: bucket.end, group: id.group, currency: nil, count: value.count, denominator: value.denominator))
                    case .amount:
                        series.points.append(.init(start: bucket.start, end: bucket.end, group: id.group, currency: id.currency, count: value.count, amount: value.amount))
                    default:
                        series.points.append(.init(start: bucket.start, end: bucket.end, group: id.group, currency: nil, count: value.count))
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

extension AnalyticsStore {
    /// Reads the rollups `query` needs, summed over the dimensions it does not use, and
    /// computes its series (``AnalyticsCalculator``).
    ///
    /// - Throws: A storage error.
    public func series(
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

import Logging
import PostgresNIO
import StoreGateCore
public import StoreGateLedger

/// The metric read summed by bucket in SQL (``RollupBucketRead``): what a metric query costs
/// on PostgreSQL is one statement whose reply is a row per measure and kept value, each with its
/// buckets, counts and amounts as three `bigint[]` (decoded in bulk), not a row of texts per
/// stored key or day.
extension PostgresLedger {
    public func rollups(_ read: RollupBucketRead) async throws(LedgerError) -> [Rollup] {
        try await foldAllRollupChanges()
        // Summing into buckets sees the same buckets, and the same non-zero amounts, as summing
        // days while no figure summed is negative (a day's sum is then non-zero exactly when one
        // of its rows is, a bucket's exactly when one of its days is): the reply says so. A read
        // that met a negative figure is read again with one bucket per day, as the daily read.
        if let rows = try await bucketRows(read, byDayFirst: read.proceeds != nil, checked: true) { return rows }
        var daily = read
        daily.bucketStarts = Array(read.from...read.through)
        return try await bucketRows(daily, byDayFirst: true, checked: false) ?? []
    }

    /// The rows of a bucketed read, or `nil` when `checked` and a figure summed was negative.
    private func bucketRows(_ read: RollupBucketRead, byDayFirst: Bool, checked: Bool) async throws(LedgerError) -> [Rollup]? {
        let statement = Self.bucketStatement(
            keeping: read.keeping, proceeds: read.proceeds != nil, byDayFirst: byDayFirst,
            daily: read.bucketStarts.count == Int(read.through - read.from + 1), fromStart: read.readsFromStart
        )
        let measures = read.measures.sorted()
        var values: [PostgresValue] = [
            .texts(measures.map(\.rawValue)), .text(read.environment.rawValue), .integer(read.readsFromStart ? .min : read.from),
            .integer(read.through), .integers(read.bucketStarts),
        ]
        if let commission = read.proceeds {
            let products = commission.products.sorted { $0.key < $1.key }
            values += [.texts(products.map(\.key)), .integers(products.map { Int64($0.value) }), .integer(Int64(commission.defaultPerMille))]
        }
        let bindings = values
        let kept = statement.kept
        let environment = read.environment
        return try await withConnection { connection in
            var result: [Rollup] = []
            for try await row in try await connection.query(Self.query(statement.sql, bindings), logger: self.logger) {
                let columns = row.makeRandomAccess()
                guard try columns.bool(4 + kept.count) || !checked else { return nil }
                let position = Int(try columns.integer(0))
                guard measures.indices.contains(position - 1) else {
                    throw LedgerError(.storage, reason: "a bucketed rollup row names a measure not asked for")
                }
                var dimensions = ["", "", "", "", ""]
                for (offset, dimension) in kept.enumerated() { dimensions[dimension] = try columns.text(1 + offset) }
                let buckets = try columns[1 + kept.count].decode([Int64].self)
                let counts = try columns[2 + kept.count].decode([Int64].self)
                let amounts = try columns[3 + kept.count].decode([Int64].self)
                guard buckets.count == counts.count, buckets.count == amounts.count else {
                    throw LedgerError(.storage, reason: "a bucketed rollup row's arrays differ in length")
                }
                let key = RollupKey(
                    day: 0, measure: measures[position - 1], environment: environment, productId: dimensions[0],
                    subscriptionGroup: dimensions[1], storefront: dimensions[2], currency: dimensions[3], offer: dimensions[4]
                )
                for index in buckets.indices {
                    guard let day = read.day(ofBucket: Int(buckets[index])) else {
                        throw LedgerError(.storage, reason: "a bucketed rollup row names a bucket out of the range")
                    }
                    var dated = key
                    dated.day = day
                    result.append(Rollup(key: dated, value: RollupValue(count: counts[index], amount: amounts[index])))
                }
            }
            return result
        }
    }

    /// The five dimension columns in ``RollupKey``'s order.
    static let dimensionColumns: [(dimension: RollupDimensions, column: String)] = [
        (.product, "product_id"), (.subscriptionGroup, "subscription_group"), (.storefront, "storefront"), (.currency, "currency"),
        (.offer, "offer"),
    ]

    /// The bucketed read for `keeping` (parameters: $1 measures, $2 environment, $3 first day
    /// read, $4 last day, $5 bucket starts; with `proceeds`, $6 / $7 the products' rates per
    /// mille and $8 the default rate), and the indexes (into ``dimensionColumns``) of the kept
    /// dimensions in the order the reply carries them. A reply row: the measure's position in
    /// $1, the kept values, the buckets, counts and amounts as `bigint[]` (in no particular
    /// order, the same in the three), and whether the sums are exact.
    ///
    /// Buckets are numbered as `width_bucket` over the bucket starts numbers them (0: the days
    /// before the range); when every bucket is a day (`daily`), by the day's offset from the
    /// first, without a search. `byDayFirst` sums the days over the dimensions not kept first
    /// (a day whose sums are zero is dropped, as in the daily read; estimated proceeds rounded
    /// there, per daily rollup and product) and then the days (and products) of each bucket —
    /// a step left out when every bucket is a day and nothing remains to sum; otherwise the
    /// stored rows are summed straight into buckets. Either way the reply says whether every
    /// figure summed (stored, or a day's) was non-negative: the condition for bucket sums to
    /// show the buckets and non-zero amounts that day sums show. Last, the buckets of each
    /// measure and kept value are folded into arrays.
    ///
    /// Sums are taken over `integer`s (``exactSum(_:)``): PostgreSQL sums a `bigint` through
    /// `numeric`, which made half of a day-by-product query's time.
    static func bucketStatement(
        keeping: RollupDimensions, proceeds: Bool, byDayFirst: Bool, daily: Bool, fromStart: Bool
    ) -> (sql: String, kept: [Int]) {
        let kept = dimensionColumns.indices.filter { keeping.contains(dimensionColumns[$0].dimension) }
        // Keeping the currency at most, and no proceeds (a rate per product), the day sums
        // (schema 18) hold the same figures in a row per day and currency.
        let table = keeping.readsDaySums && !proceeds ? "ledger_rollup_days" : "ledger_rollups"
        let list = kept.map { ", " + dimensionColumns[$0].column }.joined()
        // Proceeds are rounded per day and product (its rate), whether or not the product is kept.
        let dailyList = list + (proceeds && !keeping.contains(.product) ? ", product_id" : "")
        let bucket = daily ? "GREATEST(day - ($5::bigint[])[1] + 1, 0)" : "width_bucket(day, $5::bigint[])"
        let folded = """
            SELECT m::bigint\(list), array_agg(b::bigint), array_agg(c), array_agg(a), bool_and(exact)
            FROM buckets GROUP BY m\(list)
            """
        guard byDayFirst else {
            return ("""
                WITH buckets AS (
                    SELECT array_position($1::text[], measure) AS m, \(bucket) AS b\(list),
                        \(exactSum("count", small: true)) AS c, \(exactSum("amount")) AS a, bool_and(count >= 0 AND amount >= 0) AS exact
                    FROM \(table)
                    WHERE measure = ANY($1::text[]) AND environment = $2 AND day >= $3 AND day <= $4 AND (count <> 0 OR amount <> 0)
                    GROUP BY measure, b\(list)
                )
                \(folded)
                """, kept)
        }
        // Proceeds of a day: amount × (1000 − rate) ÷ 1000, rounded half away from zero
        // (CommissionRates.proceeds; PostgreSQL's integer division and % truncate toward zero as Swift's do).
        let dailyAmount = proceeds ? "s * (1000 - COALESCE(($7::bigint[])[array_position($6::text[], product_id)], $8::bigint))" : "s"
        let rounded = proceeds ? "CASE WHEN abs(a % 1000) * 2 >= 1000 THEN a / 1000 + sign(a)::bigint ELSE a / 1000 END" : "a"
        // A day is its own bucket, and nothing is left to sum, when every bucket is a day of
        // the range and the products read for their rates are kept.
        let buckets = daily && !fromStart && dailyList == list
            ? "SELECT m, \(bucket) AS b\(list), c, \(rounded) AS a, exact FROM daily"
            : """
                SELECT m, \(bucket) AS b\(list), \(exactSum("c", small: true)) AS c, \(exactSum(rounded)) AS a, bool_and(exact) AS exact
                FROM daily GROUP BY m, b\(list)
                """
        let sql = """
            WITH days AS (
                SELECT array_position($1::text[], measure) AS m, day\(dailyList), \(exactSum("count", small: true)) AS c, \(exactSum("amount")) AS s
                FROM \(table)
                WHERE measure = ANY($1::text[]) AND environment = $2 AND day >= $3 AND day <= $4
                GROUP BY measure, day\(dailyList)
            ), daily AS (
                SELECT m, day\(dailyList), c, \(dailyAmount) AS a, c >= 0 AND s >= 0 AS exact FROM days WHERE c <> 0 OR s <> 0
            ), buckets AS (
                \(buckets)
            )
            \(folded)
            """
        return (sql, kept)
    }

    /// The `bigint` sum of a `bigint` expression, summed over `integer`s (into a `bigint`)
    /// rather than through `numeric` as `SUM(bigint)` is: a count (`small`: a day's count of
    /// one key or one day's, far below 2^31) is summed as one `integer`; an amount as its high
    /// and low 31 bits, exact for any `bigint` (`>>` keeps the sign, the low bits are never
    /// negative). A figure out of range is an error, never a wrong sum.
    static func exactSum(_ expression: String, small: Bool = false) -> String {
        small
            ? "SUM((\(expression))::integer)"
            : "(SUM(((\(expression)) >> 31)::integer) * 2147483648 + SUM(((\(expression)) & 2147483647)::integer))"
    }
}

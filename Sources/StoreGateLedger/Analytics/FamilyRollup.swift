package import Foundation
package import StoreGateCore

/// The daily rollups one purchase family contributes: a pure function of the family's
/// transactions and its latest renewal info, the same on every backend.
///
/// The ledger keeps the sum of every family's contributions. A change to a family (recording,
/// a notification, filled money facts) replaces its old contribution with its new one in the
/// same database transaction, and `analytics rebuild` sums them afresh: both give the same
/// rollups by construction, whatever order the facts arrived in.
///
/// ## The rules (docs/analytics.md states them for readers)
/// - Revenue: a transaction with a known price above zero counts price × quantity on its
///   purchase day; one with an unknown price counts as *unpriced* (never guessed). A
///   revocation that is not an upgrade counts as a refund on its revocation day.
/// - Auto-renewable periods, in purchase order: a period covers [purchase, end) where end is
///   its expiry, or its revocation when earlier, or — upgraded — the next period's start when
///   earlier. A free trial (``MoneyFacts/isFreeTrial``) is a trial period; any other period is
///   paid (one with unknown money facts too).
/// - Periods follow on within one *run* when each starts at most an hour after the run's end
///   (60 days for Apple's `RENEWAL`: billing recovered within Apple's retry window).
/// - A paid period adds one paid start (with its MRR) on its first day and one paid end on
///   the day its coverage ends; a trial adds a trial start and a trial end likewise.
/// - A trial followed within its run by a paid period converts, dated at the trial's end.
/// - The family's first paid period is a new paid subscription; a paid period after the first
///   paid period of its run is a renewal when Apple says `RENEWAL` (or, reason unknown, when
///   it starts where the run ended); a run with a paid period after an earlier run with one
///   is a reactivation.
/// - A run with a paid period churns on the day it ends: refund when its last period was
///   revoked, otherwise — for the family's last run, from the renewal info — billing (billing
///   retry, or expiration intent 2), voluntary (expiration intent 1, or renewal turned off),
///   else other. A run still running is dated at its end, in the future: reads stop at today.
package enum FamilyRollup {
    static let secondsPerDay: Double = 86_400
    static let runTolerance: TimeInterval = 3_600
    static let billingRetryWindow: TimeInterval = 60 * 86_400

    /// The UTC day of `date`, as days since 1970.
    package static func day(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / secondsPerDay).rounded(.down))
    }

    /// The contributions of one family (every transaction sharing an original transaction id
    /// in one environment), with its latest renewal info.
    package static func contributions(_ transactions: [RecordedTransaction], renewal: RenewalRow?) -> [RollupKey: RollupValue] {
        var result: [RollupKey: RollupValue] = [:]
        walk(transactions, renewal: renewal) { _, key, value in result[key, default: RollupValue(count: 0)].add(value) }
        return result.filter { !$0.value.isZero }
    }

    /// The same contributions, each with the transaction it is counted for: what the
    /// console's drill-down lists behind a metric's point (``AnalyticsDrillDown``). Summed by
    /// key they are ``contributions(_:renewal:)``, by construction (one walk makes both).
    package static func attributed(_ transactions: [RecordedTransaction], renewal: RenewalRow?) -> [(transaction: RecordedTransaction, key: RollupKey, value: RollupValue)] {
        var result: [(transaction: RecordedTransaction, key: RollupKey, value: RollupValue)] = []
        walk(transactions, renewal: renewal) { transaction, key, value in result.append((transaction, key, value)) }
        return result
    }

    /// The rules above, applied to one family: `emit` receives every figure with the
    /// transaction it is counted for.
    private static func walk(
        _ transactions: [RecordedTransaction], renewal: RenewalRow?,
        emit: (RecordedTransaction, RollupKey, RollupValue) -> Void
    ) {
        let order = purchaseOrder(transactions)
        for index in order { walkTransaction(transactions[index], emit: emit) }
        walkPeriods(transactions, periods: periods(transactions, in: order), renewal: renewal, from: 0) { index, key, value in
            emit(transactions[index], key, value)
        }
    }

    /// Purchase order: by purchase date, then transaction id.
    static func inPurchaseOrder(_ first: RecordedTransaction, _ second: RecordedTransaction) -> Bool {
        first.purchaseDate != second.purchaseDate ? first.purchaseDate < second.purchaseDate : first.transactionId < second.transactionId
    }

    /// The positions of `transactions` in purchase order. Positions, not copies: a
    /// transaction is a dozen strings, and copying one retains each of them.
    static func purchaseOrder(_ transactions: [RecordedTransaction]) -> [Int] {
        transactions.withUnsafeBufferPointer { buffer in
            Array(buffer.indices).sorted { inPurchaseOrder(buffer[$0], buffer[$1]) }
        }
    }

    /// The positions in `order` that are subscription periods (auto-renewable, with an
    /// expiry), in that order. The two fields are read in place: passing each transaction to a
    /// function copied it.
    static func periods(_ transactions: [RecordedTransaction], in order: [Int]) -> [Int] {
        transactions.withUnsafeBufferPointer { buffer in
            order.filter { buffer[$0].productType == .autoRenewable && buffer[$0].expiresDate != nil }
        }
    }

    /// The key of a figure counted for `transaction` on the day of `date`.
    private static func key(_ measure: RollupMeasure, _ transaction: RecordedTransaction, at date: Date) -> RollupKey {
        RollupKey(
            day: day(date), measure: measure, environment: transaction.environment, productId: transaction.productId,
            subscriptionGroup: transaction.subscriptionGroup, storefront: transaction.money?.storefront ?? "",
            currency: transaction.money?.currency ?? "", offer: RollupKey.offer(of: transaction.money)
        )
    }

    /// The figures of one transaction that depend on it alone: revenue (or unpriced) and refunds.
    static func walkTransaction(_ transaction: RecordedTransaction, emit: (RecordedTransaction, RollupKey, RollupValue) -> Void) {
        let total = transaction.money?.price.map { $0.multipliedReportingOverflow(by: Int64(transaction.quantity)).partialValue }
        if let total {
            if total > 0 { emit(transaction, key(.revenue, transaction, at: transaction.purchaseDate), RollupValue(count: 1, amount: total)) }
        } else {
            emit(transaction, key(.unpriced, transaction, at: transaction.purchaseDate), RollupValue(count: 1))
        }
        if let revoked = transaction.revocationDate, !transaction.isUpgraded {
            emit(transaction, key(.refunds, transaction, at: revoked), RollupValue(count: 1, amount: total ?? 0))
        }
    }

    /// The figures of a family's subscription periods — `periods`, positions in
    /// `transactions` of its periods in purchase order (``periods(_:in:)``) — walked in full,
    /// emitting only the figures of the periods from `periods[first]` on and the churn of the
    /// runs from the one holding it on (0: every figure). `emit` gets the position in
    /// `transactions` of the period a figure is counted for.
    ///
    /// A period's figures depend on the periods before it in its run, on the next period (an
    /// upgrade ends where it starts; a trial converts when it is paid) and, for churn, on its
    /// whole run and whether that run is the family's last: ``change(from:renewal:to:renewal:)``
    /// relies on exactly this to skip what two versions of a family have in common.
    ///
    /// The periods are read in place (no transaction copied), and a run is a range of
    /// positions: this walk runs for every renewal recorded.
    static func walkPeriods(
        _ transactions: [RecordedTransaction], periods: [Int], renewal: RenewalRow?, from first: Int,
        emit: (Int, RollupKey, RollupValue) -> Void
    ) {
        guard !periods.isEmpty else { return }
        transactions.withUnsafeBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            func period(_ position: Int) -> UnsafePointer<RecordedTransaction> { base + periods[position] }
            // The last key built and its period: a period's figures differ only in measure and
            // day, so its dimensions (the offer a string made from its money facts) are read once.
            var built: (position: Int, key: RollupKey)?
            func key(_ measure: RollupMeasure, _ position: Int, at date: Date) -> RollupKey {
                guard var key = built.flatMap({ $0.position == position ? $0.key : nil }) else {
                    let key = Self.key(measure, period(position).pointee, at: date)
                    built = (position, key)
                    return key
                }
                key.measure = measure
                key.day = day(date)
                return key
            }
            func add(_ measure: RollupMeasure, _ position: Int, at date: Date, amount: Int64 = 0) {
                guard position >= first else { return }
                emit(periods[position], key(measure, position, at: date), RollupValue(count: 1, amount: amount))
            }
            // Each period's end, and the position each run starts at.
            var ends: [Date] = []
            ends.reserveCapacity(periods.count)
            var runStarts: [Int] = []
            var runEnd = Date.distantPast
            for position in periods.indices {
                let current = period(position)
                var end = current.pointee.expiresDate ?? current.pointee.purchaseDate
                if let revoked = current.pointee.revocationDate, revoked < end { end = revoked }
                if current.pointee.isUpgraded, position + 1 < periods.count, period(position + 1).pointee.purchaseDate < end {
                    end = period(position + 1).pointee.purchaseDate
                }
                end = max(end, current.pointee.purchaseDate)
                let tolerance = current.pointee.money?.isRenewal == true ? billingRetryWindow : runTolerance
                if runStarts.isEmpty || current.pointee.purchaseDate.timeIntervalSince(runEnd) > tolerance {
                    runStarts.append(position)
                    runEnd = end
                } else {
                    runEnd = max(runEnd, end)
                }
                ends.append(end)
            }
            var hadPaidRun = false
            var hadPaid = false
            for runIndex in runStarts.indices {
                let start = runStarts[runIndex]
                let stop = runIndex + 1 < runStarts.count ? runStarts[runIndex + 1] : periods.count
                var paidInRun = false
                var previousEnd: Date?
                var lastPaid: Int?
                var runEnd = ends[start]
                for position in start..<stop {
                    let current = period(position)
                    let end = ends[position]
                    runEnd = max(runEnd, end)
                    let purchased = current.pointee.purchaseDate
                    if current.pointee.money?.isFreeTrial == true {
                        add(.trialStarts, position, at: purchased)
                        add(.trialEnds, position, at: end)
                        if position + 1 < stop, period(position + 1).pointee.money?.isFreeTrial != true {
                            add(.conversions, position, at: end)
                        }
                    } else {
                        if position >= first {
                            let mrr = monthly(current.pointee)
                            add(.paidStarts, position, at: purchased, amount: mrr)
                            add(.paidEnds, position, at: end, amount: mrr)
                        }
                        if !hadPaid {
                            add(.newPaid, position, at: purchased)
                        } else if !paidInRun && hadPaidRun {
                            add(.reactivations, position, at: purchased)
                        } else if paidInRun {
                            let continues = previousEnd.map { purchased.timeIntervalSince($0) <= runTolerance } ?? false
                            if current.pointee.money?.isRenewal ?? continues { add(.renewals, position, at: purchased) }
                        }
                        hadPaid = true
                        paidInRun = true
                        lastPaid = position
                    }
                    previousEnd = max(previousEnd ?? end, end)
                }
                guard paidInRun, let last = lastPaid else { continue }
                hadPaidRun = true
                // The run's churn: emitted when the run holds period `first` or comes after it.
                guard stop - 1 >= first else { continue }
                let lastPeriod = period(last)
                let measure: RollupMeasure
                if lastPeriod.pointee.revocationDate != nil && !lastPeriod.pointee.isUpgraded {
                    measure = .churnRefund
                } else if runIndex == runStarts.count - 1, let renewal {
                    if renewal.isInBillingRetryPeriod || renewal.expirationIntent == 2 {
                        measure = .churnBilling
                    } else if renewal.expirationIntent == 1 || !renewal.willAutoRenew {
                        measure = .churnVoluntary
                    } else {
                        measure = .churnOther
                    }
                } else {
                    measure = .churnOther
                }
                emit(periods[last], key(measure, last, at: runEnd), RollupValue(count: 1))
            }
        }
    }

    /// Standard subscription durations in days, for MRR: a week, one, two, three and six
    /// months, a year.
    static let standardDays: [Double] = [7, 30.4375, 60.875, 91.3125, 182.625, 365.25]

    /// A period's price normalized to a month, in milliunits: price × 30.4375 days ÷ the
    /// standard duration nearest its length (rounded half away from zero); zero when the price
    /// is unknown or the period is a trial.
    package static func monthly(_ period: RecordedTransaction) -> Int64 {
        guard let price = period.money?.price, price > 0, let expires = period.expiresDate else { return 0 }
        let days = max(expires.timeIntervalSince(period.purchaseDate) / secondsPerDay, 1.0 / 24)
        let standard = standardDays.min { abs(log($0 / days)) < abs(log($1 / days)) } ?? 30.4375
        let total = Double(price) * Double(period.quantity)
        return Int64((total * 30.4375 / standard).rounded(.toNearestOrAwayFromZero))
    }

    /// The change from `before` to `after`: what to add to the stored rollups.
    package static func delta(from before: [RollupKey: RollupValue], to after: [RollupKey: RollupValue]) -> [Rollup] {
        var change = after
        for (key, value) in before { change[key, default: RollupValue(count: 0)].add(value, sign: -1) }
        return change.filter { !$0.value.isZero }.map { Rollup(key: $0.key, value: $0.value) }.sorted { $0.key < $1.key }
    }
}

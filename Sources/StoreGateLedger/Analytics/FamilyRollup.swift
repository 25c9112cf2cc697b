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
        let ordered = transactions.sorted(by: inPurchaseOrder)
        for transaction in ordered { walkTransaction(transaction, emit: emit) }
        walkPeriods(ordered.filter(isPeriod), renewal: renewal, from: 0, emit: emit)
    }

    /// Purchase order: by purchase date, then transaction id.
    static func inPurchaseOrder(_ first: RecordedTransaction, _ second: RecordedTransaction) -> Bool {
        first.purchaseDate != second.purchaseDate ? first.purchaseDate < second.purchaseDate : first.transactionId < second.transactionId
    }

    /// Whether `transaction` is a subscription period (auto-renewable, with an expiry).
    static func isPeriod(_ transaction: RecordedTransaction) -> Bool {
        transaction.productType == .autoRenewable && transaction.expiresDate != nil
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

    /// The figures of a family's subscription periods (``isPeriod(_:)``, in purchase order),
    /// walked in full, emitting only the figures of periods from index `first` on and the churn
    /// of the runs from the one holding period `first` on (0: every figure).
    ///
    /// A period's figures depend on the periods before it in its run, on the next period (an
    /// upgrade ends where it starts; a trial converts when it is paid) and, for churn, on its
    /// whole run and whether that run is the family's last: ``change(from:renewal:to:renewal:)``
    /// relies on exactly this to skip what two versions of a family have in common.
    static func walkPeriods(
        _ periods: [RecordedTransaction], renewal: RenewalRow?, from first: Int,
        emit: (RecordedTransaction, RollupKey, RollupValue) -> Void
    ) {
        func add(_ measure: RollupMeasure, _ period: RecordedTransaction, _ index: Int, at date: Date, amount: Int64 = 0) {
            guard index >= first else { return }
            emit(period, key(measure, period, at: date), RollupValue(count: 1, amount: amount))
        }
        var hadPaidRun = false
        var hadPaid = false
        // Runs of positions in `periods`, with each period's end: no period is copied.
        var runs: [[(index: Int, end: Date)]] = []
        var runEnd = Date.distantPast
        for index in periods.indices {
            let period = periods[index]
            var end = period.expiresDate ?? period.purchaseDate
            if let revoked = period.revocationDate, revoked < end { end = revoked }
            if period.isUpgraded, index + 1 < periods.count, periods[index + 1].purchaseDate < end {
                end = periods[index + 1].purchaseDate
            }
            end = max(end, period.purchaseDate)
            let tolerance = period.money?.isRenewal == true ? billingRetryWindow : runTolerance
            if runs.isEmpty || period.purchaseDate.timeIntervalSince(runEnd) > tolerance {
                runs.append([])
                runEnd = end
            } else {
                runEnd = max(runEnd, end)
            }
            runs[runs.count - 1].append((index, end))
        }
        for (runIndex, run) in runs.enumerated() {
            var paidInRun = false
            var previousEnd: Date?
            for (position, (index, end)) in run.enumerated() {
                let period = periods[index]
                let isTrial = period.money?.isFreeTrial == true
                if isTrial {
                    add(.trialStarts, period, index, at: period.purchaseDate)
                    add(.trialEnds, period, index, at: end)
                    if position + 1 < run.count, periods[run[position + 1].index].money?.isFreeTrial != true {
                        add(.conversions, period, index, at: end)
                    }
                } else {
                    let mrr = monthly(period)
                    add(.paidStarts, period, index, at: period.purchaseDate, amount: mrr)
                    add(.paidEnds, period, index, at: end, amount: mrr)
                    if !hadPaid {
                        add(.newPaid, period, index, at: period.purchaseDate)
                    } else if !paidInRun && hadPaidRun {
                        add(.reactivations, period, index, at: period.purchaseDate)
                    } else if paidInRun {
                        let continues = previousEnd.map { period.purchaseDate.timeIntervalSince($0) <= runTolerance } ?? false
                        if period.money?.isRenewal ?? continues { add(.renewals, period, index, at: period.purchaseDate) }
                    }
                    hadPaid = true
                    paidInRun = true
                }
                previousEnd = max(previousEnd ?? end, end)
            }
            guard paidInRun, let last = run.last(where: { periods[$0.index].money?.isFreeTrial != true }) else { continue }
            hadPaidRun = true
            // The run's churn: emitted when the run holds period `first` or comes after it.
            guard let lastIndex = run.last?.index, lastIndex >= first else { continue }
            let runEnd = run.map(\.end).max() ?? last.end
            let lastPeriod = periods[last.index]
            let measure: RollupMeasure
            if lastPeriod.revocationDate != nil && !lastPeriod.isUpgraded {
                measure = .churnRefund
            } else if runIndex == runs.count - 1, let renewal {
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
            emit(lastPeriod, key(measure, lastPeriod, at: runEnd), RollupValue(count: 1))
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

public import Foundation
package import StoreGateCore

/// What a support engineer looks up: the reads behind StoreGate's console.
///
/// Every backend answers them the same way (one contract suite checks them); none writes.
public protocol LedgerBrowsing: Sendable {
    /// One account's events, newest first: a page of its timeline.
    ///
    /// - Parameters:
    ///   - account: Whose events.
    ///   - sequence: Only events before this sequence (the last one of the previous page);
    ///     `nil` starts at the newest.
    ///   - limit: At most this many, 1...``maximumEventPage``.
    /// - Throws: ``LedgerError/Code/invalidArgument`` for a limit out of range or a sequence
    ///   below 1, or a storage error.
    func timeline(for account: AccountID, before sequence: Int64?, limit: Int) async throws(LedgerError) -> [LedgerEvent]

    /// The transactions an identifier names, newest purchase first, at most `limit`: the
    /// transaction with that id, the family with that original transaction id, the purchases
    /// with that web order line item id, or (for a UUID) those carrying that app account token,
    /// in every environment.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` for an empty or over-long term or a
    ///   limit out of range, or a storage error.
    func search(_ term: String, limit: Int) async throws(LedgerError) -> [RecordedTransaction]

    /// Counts per UTC day over `days` days ending with the day of `date`: purchases, renewals
    /// and refunds recorded (from the outbox) and subscriptions active at each day's end
    /// (from the transactions).
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` when `days` is outside 1...366, or a storage error.
    func activity(days: Int, endingAt date: Date) async throws(LedgerError) -> [DailyActivity]
}

/// One UTC day of the ledger's activity.
public struct DailyActivity: Sendable, Hashable {
    /// The day's start (midnight UTC).
    public var day: Date
    /// `purchase.recorded` events recorded that day.
    public var purchases: Int
    /// `subscription.renewed` events recorded that day.
    public var renewals: Int
    /// `transaction.revoked` events recorded that day (refunds and revocations).
    public var refunds: Int
    /// Auto-renewable subscription transactions (not upgraded away) covering the day's end:
    /// a purchase at or before it, an expiry and revocation after it.
    public var activeSubscriptions: Int

    public init(day: Date, purchases: Int = 0, renewals: Int = 0, refunds: Int = 0, activeSubscriptions: Int = 0) {
        self.day = day
        self.purchases = purchases
        self.renewals = renewals
        self.refunds = refunds
        self.activeSubscriptions = activeSubscriptions
    }
}

/// The longest search term ``LedgerBrowsing/search(_:limit:)`` takes.
public let maximumSearchTermLength = 256

/// The arguments every backend checks the same way, and the day arithmetic they share.
package enum BrowsingQuery {
    package static let millisecondsPerDay: Int64 = 86_400_000

    /// The environments a search looks in (the family and transaction indexes lead with it).
    package static let environments: [AppStoreEnvironment] = [.production, .sandbox, .xcode, .localTesting, .test]

    package static func checkTimeline(before sequence: Int64?, limit: Int) throws(LedgerError) {
        if let sequence, sequence < 1 {
            throw LedgerError(.invalidArgument, reason: "a timeline page starts before a sequence of at least 1, got \(sequence)")
        }
        guard (1...maximumEventPage).contains(limit) else {
            throw LedgerError(.invalidArgument, reason: "a timeline page holds 1...\(maximumEventPage) events, got \(limit)")
        }
    }

    /// The trimmed term, checked.
    package static func checkSearch(_ term: String, limit: Int) throws(LedgerError) -> String {
        let trimmed = term.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty, trimmed.utf8.count <= maximumSearchTermLength else {
            throw LedgerError(.invalidArgument, reason: "a search term holds 1...\(maximumSearchTermLength) bytes")
        }
        guard (1...maximumEventPage).contains(limit) else {
            throw LedgerError(.invalidArgument, reason: "a search answers 1...\(maximumEventPage) transactions, got \(limit)")
        }
        return trimmed
    }

    /// The app account token a term spells, in the stored form (`UUID.uuidString`).
    package static func token(_ term: String) -> String? {
        UUID(uuidString: term)?.uuidString
    }

    /// Newest purchase first, then by id: the order every backend answers a search in.
    package static func ordered(_ transactions: [RecordedTransaction], limit: Int) -> [RecordedTransaction] {
        Array(transactions.sorted { ($0.purchaseDate, $0.transactionId) > ($1.purchaseDate, $1.transactionId) }.prefix(limit))
    }

    /// The window's first day (milliseconds) for `days` days ending with the day of `date`.
    package static func window(days: Int, endingAt date: Date) throws(LedgerError) -> ActivityTally {
        guard (1...366).contains(days) else {
            throw LedgerError(.invalidArgument, reason: "activity covers 1...366 days, got \(days)")
        }
        let today = floorDiv(date.ledgerMilliseconds, millisecondsPerDay)
        return ActivityTally(firstDay: (today - Int64(days) + 1) * millisecondsPerDay, days: days)
    }

    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return (a % b != 0 && (a < 0) != (b < 0)) ? quotient - 1 : quotient
    }
}

/// Counts per day, filled from events and subscription periods by any backend.
package struct ActivityTally: Sendable {
    /// The first day's start, milliseconds since 1970.
    package let start: Int64
    /// The window's end (the last day's end), milliseconds since 1970.
    package var end: Int64 { start + Int64(days) * BrowsingQuery.millisecondsPerDay }
    let days: Int
    private var purchases: [Int]
    private var renewals: [Int]
    private var refunds: [Int]
    /// Differences: +1 on the first day a subscription covers, −1 after its last.
    private var active: [Int]

    init(firstDay: Int64, days: Int) {
        self.start = firstDay
        self.days = days
        purchases = Array(repeating: 0, count: days)
        renewals = purchases
        refunds = purchases
        active = Array(repeating: 0, count: days + 1)
    }

    /// The event types the tally counts.
    package static let countedTypes: [LedgerEvent.EventType] = [.purchaseRecorded, .subscriptionRenewed, .transactionRevoked]

    private func dayIndex(_ milliseconds: Int64) -> Int? {
        guard milliseconds >= start, milliseconds < end else { return nil }
        return Int((milliseconds - start) / BrowsingQuery.millisecondsPerDay)
    }

    /// Counts `count` events of `type` recorded at `recordedAt` (milliseconds), under the kind
    /// ``ActivityKind/init(counting:)`` gives it (none: not counted).
    package mutating func count(_ type: LedgerEvent.EventType, recordedAt: Int64, count: Int = 1) {
        guard let kind = ActivityKind(counting: type), let index = dayIndex(recordedAt) else { return }
        add(kind, at: index, count: count)
    }

    /// Counts a subscription transaction active from `purchase` until `until` (its expiry or
    /// revocation, whichever is earlier; milliseconds) at every day end in between.
    package mutating func countSubscription(purchase: Int64, until: Int64) {
        let day = BrowsingQuery.millisecondsPerDay
        // Day d ends at t = start + (d + 1) · day; active when purchase ≤ t < until.
        let first = max(0, ceilDiv(purchase - start, day) - 1)
        let last = min(Int64(days), ceilDiv(until - start, day) - 1)  // exclusive
        guard first < last else { return }
        active[Int(first)] += 1
        active[Int(last)] -= 1
    }

    private func ceilDiv(_ a: Int64, _ b: Int64) -> Int64 { -BrowsingQuery.floorDiv(-a, b) }

    package func result() -> [DailyActivity] {
        var running = 0
        return (0..<days).map { index in
            running += active[index]
            return DailyActivity(
                day: Date(ledgerMilliseconds: start + Int64(index) * BrowsingQuery.millisecondsPerDay),
                purchases: purchases[index], renewals: renewals[index], refunds: refunds[index], activeSubscriptions: running
            )
        }
    }

    /// Adds a stored per-day count (`ledger_activity_days`, schema 15) of `kind` on day number
    /// `day` (days since 1970-01-01, UTC); a day outside the window is ignored. An `active`
    /// count is a change of the running number of subscriptions, as ``countSubscription(purchase:until:)`` adds.
    package mutating func add(_ kind: ActivityKind, day: Int64, count: Int) {
        guard let index = dayIndex(day * BrowsingQuery.millisecondsPerDay) else { return }
        add(kind, at: index, count: count)
    }

    /// Adds `count` to `kind`'s counter of the window's day `index`.
    private mutating func add(_ kind: ActivityKind, at index: Int, count: Int) {
        switch kind {
        case .purchases: purchases[index] += count
        case .renewals: renewals[index] += count
        case .refunds: refunds[index] += count
        case .active: active[index] += count
        }
    }

    /// Adds the subscriptions active at the end of the day before the window: the sum of the
    /// stored `active` changes of every earlier day.
    package mutating func addActiveBeforeWindow(_ count: Int) {
        active[0] += count
    }

    /// The first day number of the window (days since 1970-01-01, UTC).
    package var firstDayNumber: Int64 { BrowsingQuery.floorDiv(start, BrowsingQuery.millisecondsPerDay) }

    /// The day number after the window's last day.
    package var endDayNumber: Int64 { firstDayNumber + Int64(days) }

    /// Counts one transaction if it is an auto-renewable subscription that was not upgraded away.
    package mutating func countSubscription(_ transaction: RecordedTransaction) {
        guard transaction.productType == .autoRenewable, !transaction.isUpgraded, let expires = transaction.expiresDate else { return }
        let until = min(expires, transaction.revocationDate ?? expires)
        countSubscription(purchase: transaction.purchaseDate.ledgerMilliseconds, until: until.ledgerMilliseconds)
    }
}

/// What a row of the SQL backends' per-day counts (`ledger_activity_days`, schema 15) counts:
/// the events of a counted type recorded that day, or the change that day of the number of
/// subscriptions active at a day's end (+1 on the first day whose end a transaction covers,
/// −1 on the first whose end it no longer covers: ``ActivityTally/countSubscription(purchase:until:)``'s day arithmetic).
package enum ActivityKind: String, Sendable, CaseIterable {
    case purchases, renewals, refunds, active

    /// The kind counting events of `type`, if the overview counts that type.
    package init?(counting type: LedgerEvent.EventType) {
        switch type {
        case .purchaseRecorded: self = .purchases
        case .subscriptionRenewed: self = .renewals
        case .transactionRevoked: self = .refunds
        default: return nil
        }
    }
}

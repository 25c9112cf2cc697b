import Foundation
import StoreGateCore
@testable import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Testing

extension LedgerTests {
    /// The overview's activity (`activity(days:endingAt:)`) read from the SQL backends' per-day
    /// counts (schema 15) equals the in-memory ledger's, which computes it from every stored
    /// event and transaction: on random stories of purchases, renewals, expiry extensions and
    /// reductions, upgrades, refunds, transfers and retention, told through the normal path and
    /// through the bulk path, with times on and around UTC midnights.
    @Suite("Ledger contract: activity per day")
    struct Activity {
        /// One step of a story.
        enum Step: Sendable {
            case fact(LedgerFact)
            case transfer(original: String, to: AccountID, at: Date)
            case prune(before: Date, limit: Int)
        }

        static let accounts = (0..<4).map { Purchases.account("activity-\($0)") }
        /// 2023-11-15T00:00:00Z, the story's first midnight.
        static let midnight = Date(timeIntervalSince1970: 1_700_006_400)
        static let day = 86_400.0

        /// A time on day `day` of the story: its midnight, a millisecond either side, or any
        /// millisecond of the day.
        static func moment(_ day: Int, _ random: inout SplitMix64) -> Date {
            let start = midnight.addingTimeInterval(Double(day) * Self.day)
            switch random.next() % 4 {
            case 0: return start
            case 1: return start.addingTimeInterval(-0.001)
            case 2: return start.addingTimeInterval(0.001)
            default: return start.addingTimeInterval(Double(random.next() % 86_400_000) / 1000)
            }
        }

        static func period(_ id: String, original: String, product: String = "pro.monthly", purchased: Date, expires: Date, upgraded: Bool = false, revoked: Date? = nil, signed: Date) -> VerifiedTransaction {
            Purchases.transaction(
                id, original: original, product: product, type: .autoRenewable, purchased: purchased, expires: expires,
                revoked: revoked, upgraded: upgraded, group: "pro", signed: signed
            )
        }

        /// A random story of `count` steps; its clock never goes back.
        static func story(seed: UInt64, count: Int = 60) -> [Step] {
            var random = SplitMix64(seed: seed)
            func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
            func at(_ day: Int) -> Date { Self.moment(day, &random) }
            var steps: [Step] = []
            var day = 0
            var now = midnight
            var families: [(account: AccountID, original: String, latest: VerifiedTransaction, periods: Int)] = []
            var recorded: [VerifiedTransaction] = []
            for step in 0..<count {
                if roll(3) == 0 { day += 1 + roll(2) }
                now = max(now.addingTimeInterval(0.001), at(day)).ledgerNormalized
                let account = accounts[roll(accounts.count)]
                switch roll(14) {
                case 0, 1:
                    // A new subscription, bought up to a day before it is recorded.
                    let original = "s\(step)"
                    let purchased = min(now, at(day - roll(2)))
                    let expires = at(day + 1 + roll(35))
                    let period = Self.period(original, original: original, purchased: purchased, expires: expires, signed: now)
                    steps.append(.fact(.record(Purchases.proof(period), for: account, receivedAt: now)))
                    families.append((account, original, period, 1))
                    recorded.append(period)
                case 2, 3:
                    // A renewal, by proof or by DID_RENEW.
                    guard !families.isEmpty else { continue }
                    let index = roll(families.count)
                    let family = families[index]
                    let purchased = min(now, family.latest.expiresDate ?? now)
                    let id = "\(family.original)-r\(family.periods)"
                    let period = Self.period(id, original: family.original, purchased: purchased, expires: at(day + 20 + roll(15)), signed: now)
                    families[index].latest = period
                    families[index].periods += 1
                    recorded.append(period)
                    if roll(2) == 0 {
                        steps.append(.fact(.record(Purchases.proof(period), for: family.account, receivedAt: now)))
                    } else {
                        let renewal = Purchases.renewal(original: family.original, signed: now)
                        steps.append(.fact(.notification(
                            Purchases.notification("renew-\(id)", type: "DID_RENEW", signed: now, transaction: period, renewal: renewal), receivedAt: now
                        )))
                    }
                case 4:
                    // The latest period's expiry moved (an extension, or a correction back).
                    guard !families.isEmpty else { continue }
                    let index = roll(families.count)
                    let latest = families[index].latest
                    let expires = (latest.expiresDate ?? now).addingTimeInterval(Double(roll(14) - 3) * Self.day).ledgerNormalized
                    let moved = Self.period(
                        latest.transactionId, original: latest.originalTransactionId, product: latest.productId,
                        purchased: latest.purchaseDate, expires: expires, signed: now
                    )
                    families[index].latest = moved
                    steps.append(.fact(.notification(
                        Purchases.notification("extended-\(step)", type: "RENEWAL_EXTENDED", signed: now, transaction: moved), receivedAt: now
                    )))
                case 5:
                    // An upgrade: the latest period upgraded away, a yearly one in its family.
                    guard !families.isEmpty else { continue }
                    let index = roll(families.count)
                    let family = families[index]
                    let latest = family.latest
                    let upgraded = Self.period(
                        latest.transactionId, original: latest.originalTransactionId, product: latest.productId,
                        purchased: latest.purchaseDate, expires: latest.expiresDate ?? now, upgraded: true, signed: now
                    )
                    let yearly = Self.period(
                        "\(family.original)-u\(step)", original: family.original, product: "pro.yearly", purchased: now,
                        expires: at(day + 30 + roll(20)), signed: now
                    )
                    families[index].latest = yearly
                    recorded.append(yearly)
                    steps.append(.fact(.record(Purchases.proof([upgraded, yearly]), for: family.account, receivedAt: now)))
                case 6, 7:
                    // A refund of anything recorded, revoked on a day up to now (midnights included).
                    guard !recorded.isEmpty else { continue }
                    let original = recorded[roll(recorded.count)]
                    let revoked = min(now, max(original.purchaseDate, at(day - roll(4))))
                    let refunded = Purchases.transaction(
                        original.transactionId, original: original.originalTransactionId, product: original.productId,
                        type: original.productType, purchased: original.purchaseDate, expires: original.expiresDate, revoked: revoked,
                        group: original.subscriptionGroupIdentifier, signed: now
                    )
                    steps.append(.fact(.notification(
                        Purchases.notification("refund-\(step)", type: "REFUND", signed: now, transaction: refunded), receivedAt: now
                    )))
                case 8:
                    let lifetime = Purchases.nonConsumable("n\(step)", at: now)
                    recorded.append(lifetime)
                    steps.append(.fact(.record(Purchases.proof(lifetime), for: account, receivedAt: now)))
                case 9:
                    steps.append(.fact(.record(Purchases.proof(Purchases.consumable("c\(step)", at: now)), for: account, receivedAt: now)))
                case 10:
                    guard !families.isEmpty else { continue }
                    let index = roll(families.count)
                    let to = accounts.first { $0 != families[index].account } ?? account
                    families[index].account = to
                    steps.append(.transfer(original: families[index].original, to: to, at: now))
                case 11:
                    steps.append(.prune(before: now.addingTimeInterval(-Double(roll(8)) * Self.day), limit: 1 + roll(20)))
                default:
                    // The same proof again: no event, no change.
                    guard let again = recorded.last else { continue }
                    steps.append(.fact(.record(Purchases.proof(again), for: account, receivedAt: now)))
                }
            }
            // Retention at the end, whatever the seed: the oldest events go.
            steps.append(.prune(before: now.addingTimeInterval(-10 * Self.day), limit: 25))
            return steps
        }

        /// The windows compared: a week ending every third day from before the story to well
        /// after its expiries, single days around its first midnights, and a whole year.
        static func windows(_ steps: [Step]) -> [(days: Int, end: Date)] {
            var windows: [(days: Int, end: Date)] = []
            for offset in stride(from: -3, through: 80, by: 3) {
                windows.append((7, midnight.addingTimeInterval(Double(offset) * day)))
            }
            for offset in 0..<4 {
                let start = midnight.addingTimeInterval(Double(offset) * day)
                windows += [(1, start), (1, start.addingTimeInterval(-0.001)), (2, start.addingTimeInterval(day - 0.001))]
            }
            windows.append((366, midnight.addingTimeInterval(300 * day)))
            return windows
        }

        /// The activity of every window, then (last) the counted events the ledger still stores,
        /// per day of the year-long window (its active subscriptions left at 0).
        static func observe(_ ledger: any Ledger, _ steps: [Step]) async throws -> [[DailyActivity]] {
            var observed: [[DailyActivity]] = []
            for window in windows(steps) {
                observed.append(try await ledger.activity(days: window.days, endingAt: window.end))
            }
            var stored = (observed.last ?? []).map { DailyActivity(day: $0.day) }
            for event in try await Events.drain(ledger) {
                let index = Int((event.recordedAt.timeIntervalSince(stored.first?.day ?? event.recordedAt) / day).rounded(.down))
                guard stored.indices.contains(index) else { continue }
                switch event.type {
                case .purchaseRecorded: stored[index].purchases += 1
                case .subscriptionRenewed: stored[index].renewals += 1
                case .transactionRevoked: stored[index].refunds += 1
                default: break
                }
            }
            // Whatever the backend, the activity counts exactly the events it stores.
            let counted = (observed.last ?? []).map { DailyActivity(day: $0.day, purchases: $0.purchases, renewals: $0.renewals, refunds: $0.refunds) }
            #expect(counted == stored, "\(type(of: ledger)): the activity counts the stored events")
            observed.append(stored)
            return observed
        }

        /// Records an issue for every day on which `got` differs from `expected`.
        static func compare(_ got: [[[DailyActivity]]], _ expected: [[[DailyActivity]]], _ steps: [Step]) {
            #expect(got.count == expected.count)
            let windows = Self.windows(steps).map { "\($0.days) days ending \($0.end)" } + ["the stored events"]
            for (index, (got, expected)) in zip(got, expected).enumerated() {
                for (window, (a, b)) in zip(windows, zip(got, expected)) where a != b {
                    let days = zip(a, b).filter { $0 != $1 }.map { "\($0.day): \($0.purchases)/\($0.renewals)/\($0.refunds)/\($0.activeSubscriptions) != \($1.purchases)/\($1.renewals)/\($1.refunds)/\($1.activeSubscriptions)" }
                    Issue.record("checkpoint \(index), \(window) (purchases/renewals/refunds/active): \(days.joined(separator: "; "))")
                }
            }
        }

        /// Runs a transfer or retention step; a fact is the caller's.
        static func run(_ step: Step, on ledger: any Ledger) async throws {
            switch step {
            case .fact: return
            case .transfer(let original, let to, let date):
                let request = TransferRequest(
                    environment: .production, originalTransactionId: original, account: to, reason: "activity story", transferredBy: "test", date: date
                )
                do throws(LedgerError) {
                    _ = try await ledger.transfer(request)
                } catch {
                    return  // refused the same way by every backend (the contract's transfer tests say which)
                }
            case .prune(let cutoff, let limit):
                try await Events.settle(ledger)
                _ = try await ledger.pruneEvents(recordedBefore: cutoff, limit: limit)
            }
        }

        /// Records or applies `fact` with the clock at its time; a refusal is passed over (every
        /// backend refuses it: the contract's recording tests).
        static func tell(_ fact: LedgerFact, to ledger: any Ledger, clock: TestClock) async {
            clock.now = fact.receivedAt
            do throws(LedgerError) {
                switch fact {
                case .record(let proof, let account, _): _ = try await ledger.record(proof, for: account)
                case .notification(let notification, _): _ = try await ledger.apply(notification)
                }
            } catch {}
        }

        /// Tells the story through `record`/`apply`, the clock at each step's time; observes the
        /// activity after every retention step and at the end.
        static func normal(_ steps: [Step], on backend: LedgerBackend) async throws -> [[[DailyActivity]]] {
            let clock = TestClock(midnight)
            return try await backend.withLedger(LedgerConfiguration(now: { clock.now })) { ledger async throws in
                var checkpoints: [[[DailyActivity]]] = []
                for step in steps {
                    switch step {
                    case .fact(let fact):
                        await tell(fact, to: ledger, clock: clock)
                    case .transfer(_, _, let date):
                        clock.now = date
                        try await run(step, on: ledger)
                    case .prune:
                        try await run(step, on: ledger)
                        checkpoints.append(try await observe(ledger, steps))
                    }
                }
                checkpoints.append(try await observe(ledger, steps))
                return checkpoints
            }
        }

        /// Tells the story's facts through ``BulkRecording/recordInBulk(_:)`` (the facts between
        /// two other steps in one call), its transfers and retention as ``normal(_:on:)`` does.
        static func bulk(_ steps: [Step], on backend: LedgerBackend) async throws -> [[[DailyActivity]]] {
            let clock = TestClock(midnight)
            return try await backend.withLedger(LedgerConfiguration(now: { clock.now })) { ledger async throws in
                let bulk = try #require(ledger as? any BulkRecording)
                var checkpoints: [[[DailyActivity]]] = []
                var pending: [LedgerFact] = []
                for step in steps {
                    if case .fact(let fact) = step {
                        pending.append(fact)
                        continue
                    }
                    if let last = pending.last { clock.now = last.receivedAt }
                    _ = try await bulk.recordInBulk(pending)
                    pending = []
                    if case .transfer(_, _, let date) = step { clock.now = date }
                    try await run(step, on: ledger)
                    if case .prune = step { checkpoints.append(try await observe(ledger, steps)) }
                }
                _ = try await bulk.recordInBulk(pending)
                checkpoints.append(try await observe(ledger, steps))
                return checkpoints
            }
        }

        @Test("random stories give the in-memory ledger's activity, through the normal path", arguments: LedgerBackend.all.filter { $0.kind != .memory }, [UInt64(3), 71, 2026])
        func normalPath(backend: LedgerBackend, seed: UInt64) async throws {
            let steps = Self.story(seed: seed)
            let reference = try await Self.normal(steps, on: .memory)
            // The story counts something of every kind, and retention took events away.
            let counted = try #require(reference.last).joined()
            #expect(counted.contains { $0.purchases > 0 } && counted.contains { $0.renewals > 0 } && counted.contains { $0.refunds > 0 })
            #expect(counted.contains { $0.activeSubscriptions > 0 })
            #expect(reference.count > 1)
            Self.compare(try await Self.normal(steps, on: backend), reference, steps)
        }

        @Test("random stories give the in-memory ledger's activity, through the bulk path", arguments: LedgerBackend.all.filter { $0.kind != .memory }, [UInt64(5), 99])
        func bulkPath(backend: LedgerBackend, seed: UInt64) async throws {
            let steps = Self.story(seed: seed)
            let reference = try await Self.normal(steps, on: .memory)
            Self.compare(try await Self.bulk(steps, on: backend), reference, steps)
        }

        @Test("concurrent writers on one day: every purchase counted once (PostgreSQL spreads a day's counts over shards)", arguments: LedgerBackend.all)
        func concurrentWriters(backend: LedgerBackend) async throws {
            let clock = TestClock(Self.midnight)
            try await backend.withLedger(LedgerConfiguration(now: { clock.now })) { ledger async throws in
                let end = Self.midnight.addingTimeInterval(30 * Self.day)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for writer in 0..<16 {
                        group.addTask {
                            for index in 0..<3 {
                                let id = "w\(writer)-\(index)"
                                let period = Self.period(id, original: id, purchased: Self.midnight.addingTimeInterval(60), expires: end, signed: Self.midnight)
                                try await ledger.record(Purchases.proof(period), for: Purchases.account("writer-\(writer)"))
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let today = try await ledger.activity(days: 2, endingAt: Self.midnight.addingTimeInterval(Self.day))
                #expect(today.map(\.purchases) == [48, 0])
                #expect(today.map(\.activeSubscriptions) == [48, 48])
            }
        }

        @Test("bench write-costs' switch: without the triggers a purchase is not counted, with them it is", arguments: LedgerBackend.all.filter { $0.kind != .memory })
        func triggersSwitchedOff(backend: LedgerBackend) async throws {
            let clock = TestClock(Self.midnight)
            for dropped in [false, true] {
                try await backend.withLedger(LedgerConfiguration(now: { clock.now })) { ledger async throws in
                    if dropped {
                        if let sqlite = ledger as? SQLiteLedger { try await sqlite.dropActivityTriggersForBenchmark() }
                        if let postgres = ledger as? PostgresLedger { try await postgres.disableActivityTriggersForBenchmark() }
                    }
                    let end = Self.midnight.addingTimeInterval(30 * Self.day)
                    let period = Self.period("s", original: "s", purchased: Self.midnight.addingTimeInterval(60), expires: end, signed: Self.midnight)
                    try await ledger.record(Purchases.proof(period), for: Self.accounts[0])
                    let today = try await ledger.activity(days: 1, endingAt: Self.midnight)
                    #expect(today.map(\.purchases) == [dropped ? 0 : 1])
                    #expect(today.map(\.activeSubscriptions) == [dropped ? 0 : 1])
                }
            }
        }

        @Test("a subscription counts at the end of each day from the day its purchase ends through the day before its expiry's", arguments: LedgerBackend.all)
        func dayBoundaries(backend: LedgerBackend) async throws {
            let clock = TestClock(Self.midnight)
            try await backend.withLedger(LedgerConfiguration(now: { clock.now })) { ledger async throws in
                let m = { (days: Double) in Self.midnight.addingTimeInterval(days * Self.day) }
                let periods = [
                    // Bought at a midnight: that midnight ends day −1, so it counts there.
                    Self.period("a", original: "a", purchased: m(0), expires: m(2), signed: m(0)),
                    // Bought a millisecond after: counts from day 0.
                    Self.period("b", original: "b", purchased: m(0).addingTimeInterval(0.001), expires: m(2).addingTimeInterval(0.001), signed: m(0)),
                    // Expiring exactly at a midnight: not active at that day's end.
                    Self.period("c", original: "c", purchased: m(1).addingTimeInterval(-0.001), expires: m(3), signed: m(0)),
                    // Shorter than a day and inside one: never active at a day's end.
                    Self.period("d", original: "d", purchased: m(1).addingTimeInterval(3600), expires: m(1).addingTimeInterval(7200), signed: m(0)),
                    // Revoked before it expires: the revocation ends it.
                    Self.period("e", original: "e", purchased: m(0), expires: m(30), revoked: m(2).addingTimeInterval(1), signed: m(0)),
                    // Upgraded away: never counted.
                    Self.period("f", original: "f", purchased: m(0), expires: m(30), upgraded: true, signed: m(0)),
                ]
                clock.now = m(0)
                for period in periods { try await ledger.record(Purchases.proof(period), for: Self.accounts[0]) }
                let days = try await ledger.activity(days: 5, endingAt: m(3))
                #expect(days.map(\.day) == (-1...3).map { m(Double($0)) })
                #expect(days.map(\.activeSubscriptions) == [2, 4, 3, 0, 0])
                // Every purchase was recorded at midnight m(0): day 0's purchases, not day −1's.
                let purchases = try await Events.drain(ledger).filter { $0.type == .purchaseRecorded }.count
                #expect(purchases > 0)
                #expect(days.map(\.purchases) == [0, purchases, 0, 0, 0])

                // A window wholly before and one wholly after: nothing but what is active.
                #expect(try await ledger.activity(days: 3, endingAt: m(-2)).allSatisfy { $0 == DailyActivity(day: $0.day) })
                #expect(try await ledger.activity(days: 1, endingAt: m(40)) == [DailyActivity(day: m(40))])

                // The expiry moved to a midnight and back: the counts follow the row.
                clock.now = m(1)
                let extended = Self.period("a", original: "a", purchased: m(0), expires: m(5), signed: m(1))
                _ = try await ledger.apply(Purchases.notification("ext", type: "RENEWAL_EXTENDED", signed: m(1), transaction: extended))
                #expect(try await ledger.activity(days: 6, endingAt: m(4)).map(\.activeSubscriptions) == [2, 4, 4, 1, 1, 0])
            }
        }

        @Test("retention takes the deleted events' counts away and leaves the active subscriptions", arguments: LedgerBackend.all)
        func retention(backend: LedgerBackend) async throws {
            let clock = TestClock(Self.midnight)
            try await backend.withLedger(LedgerConfiguration(now: { clock.now })) { ledger async throws in
                let m = { (days: Double) in Self.midnight.addingTimeInterval(days * Self.day) }
                for index in 0..<4 {
                    clock.now = m(Double(index)).addingTimeInterval(60)
                    let period = Self.period("p\(index)", original: "p\(index)", purchased: clock.now, expires: m(40), signed: clock.now)
                    try await ledger.record(Purchases.proof(period), for: Self.accounts[index % 2])
                }
                // What the stored events say, per day of the window.
                let stored = { () async throws -> [Int] in
                    let events = try await Events.drain(ledger).filter { $0.type == .purchaseRecorded }
                    return (0..<4).map { index in events.filter { Int(($0.recordedAt.timeIntervalSince(Self.midnight) / Self.day).rounded(.down)) == index }.count }
                }
                let before = try await ledger.activity(days: 4, endingAt: m(3))
                #expect(before.map(\.purchases) == [1, 1, 1, 1])
                #expect(before.map(\.activeSubscriptions) == [1, 2, 3, 4])
                try await Events.settle(ledger)
                #expect(try await ledger.pruneEvents(recordedBefore: m(2), limit: 100).deleted > 0)
                let after = try await ledger.activity(days: 4, endingAt: m(3))
                #expect(after.map(\.purchases) == [0, 0, 1, 1])
                #expect(after.map(\.purchases) == (try await stored()))
                #expect(after.map(\.activeSubscriptions) == [1, 2, 3, 4], "transactions are not events: retention keeps them")
                // Everything but the newest event goes.
                #expect(try await ledger.pruneEvents(recordedBefore: m(100), limit: 100).deleted > 0)
                let last = try await ledger.activity(days: 4, endingAt: m(3))
                #expect(last.map(\.purchases) == (try await stored()))
                #expect(last.map(\.purchases).reduce(0, +) <= 1)
                #expect(last.map(\.activeSubscriptions) == [1, 2, 3, 4])
            }
        }
    }
}

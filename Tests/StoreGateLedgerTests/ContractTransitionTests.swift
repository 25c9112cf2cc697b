import Foundation
import Logging
import StoreGateCore
@testable import StoreGateLedger
@testable import StoreGateLedgerPostgres
@testable import StoreGateLedgerSQLite
import Testing

extension LedgerTests {
    /// Time-driven transitions: a period or a grace period ends without any write, and the
    /// stream still says so — once, in order, on every backend.
    @Suite("Ledger contract: time-driven transitions")
    struct Transitions {
        let alice = Purchases.account("alice")

        static let now = Date().ledgerNormalized

        static func days(_ days: Double) -> Date {
            now.addingTimeInterval(days * Purchases.day).ledgerNormalized
        }

        static func period(_ id: String, original: String, from start: Date, to end: Date, group: String = "pro") -> VerifiedTransaction {
            Purchases.transaction(
                id, original: original, product: "pro.monthly", type: .autoRenewable, purchased: start, expires: end, group: group, signed: start
            )
        }

        static func appended(_ ledger: any Ledger, _ operation: () async throws -> Void) async throws -> [LedgerEvent] {
            try await Events.appended(ledger, operation)
        }

        /// Runs the clock once: how many families were due, and the events it appended.
        static func tick(_ ledger: any Ledger, until date: Date, limit: Int = 100) async throws -> (due: Int, events: [LedgerEvent]) {
            var due = 0
            let events = try await appended(ledger) { due = try await ledger.emitElapsedTransitions(until: date, limit: limit) }
            return (due, events)
        }

        @Test("a period's end and a grace period's end are appended once, at their moments", arguments: LedgerBackend.all)
        func periodAndGraceEnd(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let alice = self.alice
                // One family that simply expires in 10 days, one that enters a grace period
                // (billing retry, grace until day 12) when its period ends in 10 days.
                try await ledger.record(Purchases.proof(
                    Self.period("a1", original: "a1", from: Self.days(-20), to: Self.days(10)),
                    renewal: Purchases.renewal(original: "a1", willRenew: false, signed: Self.days(-20))), for: alice)
                try await ledger.record(Purchases.proof(
                    Self.period("b1", original: "b1", from: Self.days(-20), to: Self.days(10), group: "plus"),
                    renewal: Purchases.renewal(original: "b1", billingRetry: true, grace: Self.days(12), signed: Self.days(-1))), for: alice)

                // Nothing is due yet.
                var tick = try await Self.tick(ledger, until: Self.days(9))
                #expect(tick.due == 0 && tick.events.isEmpty)

                // Day 11: both periods ended.
                tick = try await Self.tick(ledger, until: Self.days(11))
                #expect(tick.due == 2)
                var events = tick.events
                #expect(events.map(\.type) == [.subscriptionStateChanged, .subscriptionStateChanged])
                let byFamily = Dictionary(uniqueKeysWithValues: events.map { ($0.originalTransactionId ?? "", $0) })
                #expect(byFamily["a1"]?.previousState == .active)
                #expect(byFamily["a1"]?.entitlement?.state == .expired)
                #expect(byFamily["a1"]?.entitlement?.isEntitled == false)
                #expect(byFamily["b1"]?.previousState == .active)
                #expect(byFamily["b1"]?.entitlement?.state == .inGracePeriod)
                #expect(byFamily["b1"]?.entitlement?.isEntitled == true)
                #expect(events.allSatisfy {
                    $0.occurredAt == Self.days(10) && $0.recordedAt == Self.days(11) && $0.source == LedgerEvent.timeSource
                        && $0.account == alice && $0.productId == "pro.monthly" && $0.notificationType == nil
                })

                // Again at day 11: nothing more.
                tick = try await Self.tick(ledger, until: Self.days(11))
                #expect(tick.due == 0 && tick.events.isEmpty)

                // Day 13: the grace period ended; the expired family has nothing left to say.
                tick = try await Self.tick(ledger, until: Self.days(13))
                #expect(tick.due == 1)
                events = tick.events
                #expect(events.map(\.type) == [.subscriptionStateChanged])
                #expect(events.first?.previousState == .inGracePeriod)
                #expect(events.first?.entitlement?.state == .inBillingRetry)
                #expect(events.first?.occurredAt == Self.days(12))
                #expect(try await ledger.emitElapsedTransitions(until: Self.days(400), limit: 100) == 0)

                // The ledger's answer agrees with the stream (one group per family here).
                let at13 = try await ledger.entitlements(for: alice, at: Self.days(13))
                let states = Set(at13.subscriptions.map(\.state.rawValue))
                #expect(states == [SubscriptionEntitlement.State.expired.rawValue, SubscriptionEntitlement.State.inBillingRetry.rawValue])
            }
        }

        @Test("one call past several boundaries appends each, in order", arguments: LedgerBackend.all)
        func severalBoundaries(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof(
                    Self.period("c1", original: "c1", from: Self.days(-20), to: Self.days(10)),
                    renewal: Purchases.renewal(original: "c1", billingRetry: true, grace: Self.days(12), signed: Self.days(-1))), for: alice)
                let tick = try await Self.tick(ledger, until: Self.days(30), limit: 1)
                #expect(tick.due == 1)
                let events = tick.events
                #expect(events.map(\.previousState) == [.active, .inGracePeriod])
                #expect(events.map { $0.entitlement?.state } == [.inGracePeriod, .inBillingRetry])
                #expect(events.map(\.occurredAt) == [Self.days(10), Self.days(12)])
            }
        }

        @Test("a write after a boundary passed appends the transition before its own events", arguments: LedgerBackend.all)
        func writeAfterBoundary(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                // A period ending in a moment (the ledger records at its own clock's now).
                let end = Date().addingTimeInterval(0.8).ledgerNormalized
                try await ledger.record(Purchases.proof(Self.period("d1", original: "d1", from: Self.days(-30), to: end)), for: alice)
                try await Task.sleep(for: .milliseconds(1000))
                // The renewal arrives late; no clock ran in between.
                let renewal = Self.period("d2", original: "d1", from: end, to: Self.days(30))
                let events = try await Self.appended(ledger) {
                    try await ledger.apply(Purchases.notification("n-late", type: "DID_RENEW", signed: end, transaction: renewal))
                }
                #expect(events.map(\.type) == [.subscriptionStateChanged, .subscriptionRenewed, .subscriptionStateChanged])
                #expect(events.first?.source == LedgerEvent.timeSource)
                #expect(events.first?.occurredAt == end)
                #expect(events.first?.previousState == .active)
                #expect(events.first?.entitlement?.state == .expired)
                #expect(events.last?.previousState == .expired)
                #expect(events.last?.entitlement?.state == .active)
                #expect(events.last?.source == ProofKind.notification.rawValue)
                // The write moved the family's next moment to the new period's end.
                #expect(try await ledger.emitElapsedTransitions(until: Self.days(29), limit: 100) == 0)
                #expect(try await ledger.emitElapsedTransitions(until: Self.days(31), limit: 100) == 1)
            }
        }

        @Test("families without time-driven states are never due; a refund ends the wait", arguments: LedgerBackend.all)
        func notDue(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.consumable("c1")), for: alice)
                // Expired before it was recorded: nothing ahead.
                try await ledger.record(Purchases.proof(Self.period("e1", original: "e1", from: Self.days(-60), to: Self.days(-30))), for: alice)
                // Refunded before its end: the end changes nothing.
                try await ledger.record(Purchases.proof(Self.period("f1", original: "f1", from: Self.days(-5), to: Self.days(25))), for: alice)
                try await ledger.apply(Purchases.notification(
                    "n-refund", type: "REFUND", signed: Self.days(-1),
                    transaction: Purchases.transaction(
                        "f1", product: "pro.monthly", type: .autoRenewable, purchased: Self.days(-5), expires: Self.days(25),
                        revoked: Self.days(-1), group: "pro", signed: Self.days(-1))))
                let tick = try await Self.tick(ledger, until: Self.days(400))
                #expect(tick.due == 0 && tick.events.isEmpty)
                await expectLedgerError(.invalidArgument) { try await ledger.emitElapsedTransitions(until: Self.now, limit: 0) }
            }
        }

        @Test("clocks running at once on two instances append each transition once", arguments: LedgerBackend.persistent)
        func twoInstances(backend: LedgerBackend) async throws {
            try await backend.withStore { store async throws in
                let first = try await store.open()
                let second = try await store.open()
                let accounts = (0..<30).map { Purchases.account("user-\($0)") }
                for (index, account) in accounts.enumerated() {
                    try await first.record(Purchases.proof(Self.period("p\(index)", original: "p\(index)", from: Self.days(-10), to: Self.days(1))), for: account)
                }
                let before = try await Events.drain(first).last?.sequence ?? 0
                let examined = try await withThrowingTaskGroup(of: Int.self) { group in
                    for ledger in [first, second, first, second] {
                        group.addTask {
                            var total = 0
                            while true {
                                // A round that meets the other instance's write to a family is
                                // refused as retryable (PostgreSQL's family revisions), and the
                                // clock service runs it again: so does this loop.
                                let count: Int
                                do {
                                    count = try await ledger.emitElapsedTransitions(until: Self.days(2), limit: 4)
                                } catch let error as LedgerError where error.isRetryable {
                                    continue
                                }
                                total += count
                                if count == 0 { return total }
                            }
                        }
                    }
                    return try await group.reduce(0, +)
                }
                #expect(examined == 30)
                let events = try await Events.drain(first, after: before)
                #expect(events.count == 30)
                #expect(Set(events.compactMap(\.originalTransactionId)).count == 30)
                #expect(events.allSatisfy { $0.previousState == .active && $0.entitlement?.state == .expired })
            }
        }

        @Test("migration 6 sets every owned family's next moment as the ledger would", arguments: LedgerBackend.persistent)
        func backfill(backend: LedgerBackend) async throws {
            try await backend.withStore { store async throws in
                let ledger = try await store.open()
                let alice = self.alice
                try await ledger.record(Purchases.proof(Self.period("g1", original: "g1", from: Self.days(-20), to: Self.days(10))), for: alice)
                try await ledger.record(Purchases.proof(
                    Self.period("g2", original: "g2", from: Self.days(-33), to: Self.days(-3)),
                    renewal: Purchases.renewal(original: "g2", billingRetry: true, grace: Self.days(3), signed: Self.days(-3))), for: alice)
                try await ledger.record(Purchases.proof(Self.period("g3", original: "g3", from: Self.days(-60), to: Self.days(-30))), for: alice)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("g4")), for: alice)
                let planned = try await Self.nextTransitions(ledger, location: store.location)
                #expect(planned == [
                    "g1": Self.days(10).ledgerMilliseconds, "g2": Self.days(3).ledgerMilliseconds, "g3": nil, "g4": nil,
                ])
                try await Self.rerunBackfill(ledger, location: store.location)
                #expect(try await Self.nextTransitions(ledger, location: store.location) == planned)
            }
        }

        /// Each family's stored next moment, by original transaction id.
        static func nextTransitions(_ ledger: any Ledger, location: String) async throws -> [String: Int64?] {
            let sql = "SELECT original_transaction_id, next_transition_at FROM ledger_families"
            var result: [String: Int64?] = [:]
            if let postgres = ledger as? PostgresLedger {
                let logger = postgres.logger
                let rows = try await postgres.withConnection { connection in
                    try await PostgresLedger.rows(connection, sql, [], logger: logger).map { row in (try row.text(0), try row.optionalInteger(1)) }
                }
                for (id, next) in rows { result[id] = next }
            } else {
                let connection = try SQLiteConnection(path: location, create: false, busyTimeoutMilliseconds: 5000)
                defer { connection.close() }
                try connection.query(sql) { row throws(LedgerError) in result[row.text(0)] = row.optionalInteger(1) }
            }
            return result
        }

        /// Clears the stored moments and runs migration 6's backfill again.
        static func rerunBackfill(_ ledger: any Ledger, location: String) async throws {
            let clear = "UPDATE ledger_families SET next_transition_at = NULL"
            if let postgres = ledger as? PostgresLedger {
                let logger = postgres.logger
                try await postgres.withConnection { connection in
                    for statement in [clear] + PostgresSchema.nextTransitionBackfill {
                        try await PostgresLedger.run(connection, statement, [], logger: logger)
                    }
                }
            } else {
                let connection = try SQLiteConnection(path: location, create: false, busyTimeoutMilliseconds: 5000)
                defer { connection.close() }
                for statement in [clear] + SQLiteSchema.nextTransitionBackfill { try connection.execute(statement) }
            }
        }
    }
}

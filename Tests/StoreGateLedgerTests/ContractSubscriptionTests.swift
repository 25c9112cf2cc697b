import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Subscriptions: the state of a group at a date, and the evidence behind it.
    @Suite("Ledger contract: subscriptions")
    struct Subscriptions {
        let alice = Purchases.account("alice")

        /// Two monthly periods, s1 [day 0, 30) and s2 [30, 60), plus what a case adds.
        struct Case: Sendable, CustomTestStringConvertible {
            var name: String
            var extra: [VerifiedTransaction] = []
            var renewal: VerifiedRenewalInfo?
            var day: Double
            var state: SubscriptionEntitlement.State
            var deciding: String
            var testDescription: String { name }
        }

        static let cases: [Case] = [
            Case(name: "inside a period it is active", day: 45, state: .active, deciding: "s2"),
            Case(name: "after the last period it is expired", day: 61, state: .expired, deciding: "s2"),
            Case(
                name: "in billing retry with a grace period covering the date it is in grace",
                renewal: Purchases.renewal(original: "s1", billingRetry: true, grace: Purchases.date(66), signed: Purchases.date(60)),
                day: 62, state: .inGracePeriod, deciding: "s2"
            ),
            Case(
                name: "in billing retry after the grace period it is in billing retry",
                renewal: Purchases.renewal(original: "s1", billingRetry: true, grace: Purchases.date(66), signed: Purchases.date(60)),
                day: 70, state: .inBillingRetry, deciding: "s2"
            ),
            Case(
                name: "a refunded latest period makes it revoked",
                extra: [Purchases.period("s2", original: "s1", start: 30, revoked: Purchases.date(40), signed: Purchases.date(40))],
                day: 45, state: .revoked, deciding: "s2"
            ),
            Case(
                name: "an upgraded latest period without its successor makes it upgraded",
                extra: [Purchases.period("s2", original: "s1", start: 30, upgraded: true, signed: Purchases.date(35))],
                day: 45, state: .upgraded, deciding: "s2"
            ),
            Case(
                name: "the upgrade's own transaction makes it active on the new product",
                extra: [
                    Purchases.period("s2", original: "s1", start: 30, upgraded: true, signed: Purchases.date(35)),
                    Purchases.period("u1", original: "s1", product: "pro.yearly", start: 35, days: 365),
                ],
                day: 45, state: .active, deciding: "u1"
            ),
        ]

        @Test("a subscription group's state at a date", arguments: LedgerBackend.all, cases)
        func state(backend: LedgerBackend, example: Case) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0)), for: alice)
                try await ledger.record(Purchases.proof(Purchases.period("s2", original: "s1", start: 30)), for: alice)
                for transaction in example.extra {
                    try await ledger.record(Purchases.proof(transaction), for: alice)
                }
                if let renewal = example.renewal {
                    try await ledger.record(Purchases.proof([], renewal: renewal, signed: renewal.signedDate, raw: [1, 2, 3]), for: alice)
                }
                let status = try #require(try await ledger.entitlements(for: alice, at: Purchases.date(example.day)).subscription(inGroup: "pro"))
                #expect(status.state == example.state)
                #expect(status.decidingTransactionId == example.deciding)
                #expect(status.isEntitled == (example.state == .active || example.state == .inGracePeriod))
                #expect(status.transactions.map(\.transactionId) == ["s1", "s2"] + example.extra.map(\.transactionId).filter { $0 != "s2" })
            }
        }

        @Test("renewal info gives will-renew, the auto-renew product and the grace period", arguments: LedgerBackend.all)
        func renewalInfo(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let renewal = Purchases.renewal(original: "s1", autoRenewProduct: "pro.yearly", willRenew: false, signed: Purchases.date(10))
                try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0), renewal: renewal), for: alice)
                // An older renewal info delivered later does not replace it.
                let older = Purchases.renewal(original: "s1", willRenew: true, signed: Purchases.date(5))
                try await ledger.record(Purchases.proof([], renewal: older, signed: Purchases.date(5), raw: [9]), for: alice)
                let status = try #require(try await ledger.entitlements(for: alice, at: Purchases.date(12)).subscription(inGroup: "pro"))
                #expect(status.state == .active)
                #expect(status.willAutoRenew == false)
                #expect(status.autoRenewProductId == "pro.yearly")
                #expect(status.expiresDate == Purchases.date(30))
                #expect(status.expirationIntent == 1)
            }
        }

        @Test("entitlement checks follow the state: active and grace entitle, the rest do not", arguments: LedgerBackend.all)
        func facade(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let clock = TestClock(Purchases.date(10))
                let purchases = LedgerFacade(ledger: ledger, now: { clock.now })
                try await purchases.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0)), for: alice)
                try await purchases.record(Purchases.proof([Purchases.consumable("c1", quantity: 2), Purchases.nonConsumable("n1")]), for: alice)
                #expect(try await purchases.isPurchased("pro.monthly", by: alice))
                #expect(try await purchases.isSubscribed(inGroup: "pro", account: alice))
                #expect(try await purchases.isPurchased("pro.lifetime", by: alice))
                #expect(try await purchases.isPurchased("coins", by: alice))
                #expect(try await purchases.count("coins", for: alice) == 2)
                try await purchases.consume("coins", quantity: 2, idempotencyKey: "k", for: alice)
                #expect(try await !purchases.isPurchased("coins", by: alice))
                clock.now = Purchases.date(31)
                #expect(try await !purchases.isPurchased("pro.monthly", by: alice))
                #expect(try await !purchases.isSubscribed(inGroup: "pro", account: alice))
                #expect(try await purchases.entitlements(for: alice).date == Purchases.date(31))
            }
        }
    }
}

/// A settable clock for facade tests.
final class TestClock: @unchecked Sendable {
    // Tests set and read it from one task at a time.
    var now: Date
    init(_ now: Date) { self.now = now }
}

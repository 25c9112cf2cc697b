import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Grants: given for a time, once per idempotency key, revoked, and ended by time alone, each
    /// with its event (issue 28).
    @Suite("Ledger contract: grants")
    struct Grants {
        let alice = Purchases.account("alice")
        let bob = Purchases.account("bob")

        func request(_ key: String = "ticket-1", entitlement: String = "pro", term: GrantRequest.Term = .duration(.seconds(7 * 86_400)), for account: AccountID? = nil, reason: String = "support ticket 1") -> GrantRequest {
            GrantRequest(account: account ?? alice, entitlement: entitlement, term: term, reason: reason, grantedBy: "support", idempotencyKey: key, startsAt: Purchases.date(1))
        }

        @Test("a grant is stored once per key with its event; the same request again replays it; another request with the key is refused", arguments: LedgerBackend.all)
        func grantOnce(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let first = try await ledger.grant(request())
                #expect(!first.isReplay)
                #expect(first.grant.entitlement == "pro" && first.grant.startsAt == Purchases.date(1) && first.grant.expiresAt == Purchases.date(8))
                #expect(first.grant.reason == "support ticket 1" && first.grant.grantedBy == "support")
                let again = try await ledger.grant(request())
                #expect(again.isReplay)
                #expect(again.grant == first.grant)
                await expectLedgerError(.idempotencyKeyReused) { try await ledger.grant(request(entitlement: "plus")) }
                await expectLedgerError(.idempotencyKeyReused) { try await ledger.grant(request(term: .until(Purchases.date(9)))) }
                // The same key on another account is another grant.
                #expect(try await ledger.grant(request(for: bob)).isReplay == false)
                #expect(try await ledger.grants(for: alice) == [first.grant])

                let events = try await Events.drain(ledger).filter { $0.account == alice }
                #expect(events.map(\.type) == [.grantCreated])
                let event = try #require(events.first)
                #expect(event.productId == "pro" && event.source == "grant" && event.occurredAt == Purchases.date(1) && event.entitlement == nil)
                #expect(event.grant == LedgerEvent.Grant(id: first.grant.id, entitlement: "pro", startsAt: Purchases.date(1), expiresAt: Purchases.date(8), reason: "support ticket 1", actor: "support"))
            }
        }

        @Test("entitlementFacts reads what entitlements(for:at:) and grants(for:) read: purchases, renewals, balances, live, ended and revoked grants, newest first", arguments: LedgerBackend.all)
        func factsReadTogether(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                // Nothing yet: empty holdings, no grants (PostgreSQL's statement then returns no row at all).
                let empty = try await ledger.entitlementFacts(for: alice, at: Purchases.date(3))
                #expect(empty.holdings == (try await ledger.entitlements(for: alice, at: Purchases.date(3))) && empty.grants.isEmpty)

                try await ledger.record(Purchases.proof(Purchases.nonConsumable("f1")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.consumable("f2", quantity: 3)), for: alice)
                try await ledger.record(Purchases.proof(Purchases.period("f3", original: "f3", start: 0)), for: alice)
                let first = try await ledger.grant(request("k1")).grant
                let second = try await ledger.grant(GrantRequest(account: alice, entitlement: "plus", term: .until(Purchases.date(5)), reason: "goodwill", grantedBy: "support", idempotencyKey: "k2", startsAt: Purchases.date(2))).grant
                let third = try await ledger.grant(GrantRequest(account: alice, entitlement: "pro", term: .duration(.seconds(3600)), reason: "outage", grantedBy: "ops", idempotencyKey: "k3", startsAt: Purchases.date(2))).grant
                _ = try await ledger.revokeGrant(third.id, of: alice, by: "lead", reason: "double", at: Purchases.date(3))
                _ = try await ledger.grant(request("k4", for: bob))

                for date in [Purchases.date(1), Purchases.date(4), Purchases.date(40)] {
                    let facts = try await ledger.entitlementFacts(for: alice, at: date)
                    #expect(facts.holdings == (try await ledger.entitlements(for: alice, at: date)))
                    #expect(facts.grants == (try await ledger.grants(for: alice)))
                }
                let facts = try await ledger.entitlementFacts(for: alice, at: Purchases.date(4))
                #expect(Set(facts.grants.map(\.id)) == [first.id, second.id, third.id])
                #expect(facts.grants.first { $0.id == third.id }?.revokedBy == "lead")
                #expect(facts.holdings.balance(of: "coins") == 3)
                #expect(facts.holdings.isEntitled(to: "pro.lifetime"))
            }
        }

        static let invalid: [(GrantRequest.Term, String, String, String)] = [
            (.duration(.seconds(0)), "pro", "why", "k"),
            (.until(Purchases.date(1)), "pro", "why", "k"),
            (.until(Purchases.date(0)), "pro", "why", "k"),
            (.duration(.seconds(200 * 366 * 86_400)), "pro", "why", "k"),
            (.duration(.seconds(60)), "pro plus", "why", "k"),
            (.duration(.seconds(60)), "", "why", "k"),
            (.duration(.seconds(60)), "pro", "", "k"),
            (.duration(.seconds(60)), "pro", "line\nbreak", "k"),
            (.duration(.seconds(60)), "pro", "why", ""),
        ]

        @Test("a grant with a bad term, identifier, reason or key is refused and stores nothing", arguments: LedgerBackend.all)
        func refusesBadGrants(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                for (term, entitlement, reason, key) in Self.invalid {
                    await expectLedgerError(.invalidArgument) {
                        try await ledger.grant(GrantRequest(account: alice, entitlement: entitlement, term: term, reason: reason, grantedBy: "support", idempotencyKey: key, startsAt: Purchases.date(1)))
                    }
                }
                #expect(try await ledger.grants(for: alice).isEmpty)
                #expect(try await Events.drain(ledger).isEmpty)
            }
        }

        @Test("a revocation is stored once with its event; an unknown or another account's grant is not found", arguments: LedgerBackend.all)
        func revoke(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let grant = try await ledger.grant(request()).grant
                let revoked = try await ledger.revokeGrant(grant.id, of: alice, by: "lead", reason: "granted by mistake", at: Purchases.date(2))
                #expect(revoked.revokedAt == Purchases.date(2) && revoked.revokedBy == "lead" && revoked.revocationReason == "granted by mistake")
                #expect(revoked.isActive(at: Purchases.date(3)) == false)
                let again = try await ledger.revokeGrant(grant.id, of: alice, by: "other", reason: "again", at: Purchases.date(4))
                #expect(again == revoked)
                await expectLedgerError(.grantNotFound) { try await ledger.revokeGrant(grant.id, of: bob, by: "lead", reason: "x", at: Purchases.date(2)) }
                await expectLedgerError(.grantNotFound) { try await ledger.revokeGrant("no-such-grant", of: alice, by: "lead", reason: "x", at: Purchases.date(2)) }
                await expectLedgerError(.invalidArgument) { try await ledger.revokeGrant(grant.id, of: alice, by: "lead", reason: "", at: Purchases.date(2)) }
                #expect(try await ledger.grants(for: alice) == [revoked])
                let events = try await Events.drain(ledger)
                #expect(events.map(\.type) == [.grantCreated, .grantRevoked])
                #expect(events.last?.grant?.reason == "granted by mistake")
                #expect(events.last?.grant?.actor == "lead")
                #expect(events.last?.occurredAt == Purchases.date(2))
            }
        }

        @Test("a grant ends by time alone: the clock appends grant.expired once, never for a revoked grant", arguments: LedgerBackend.all)
        func endsByTime(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let short = try await ledger.grant(request("k1", term: .duration(.seconds(86_400)))).grant
                let revoked = try await ledger.grant(request("k2", term: .duration(.seconds(86_400)))).grant
                try await ledger.revokeGrant(revoked.id, of: alice, by: "lead", reason: "no", at: Purchases.date(1.5))
                let long = try await ledger.grant(request("k3", term: .duration(.seconds(30 * 86_400)))).grant
                #expect(try await ledger.emitElapsedTransitions(until: Purchases.date(1.9), limit: 100) == 0)
                #expect(try await ledger.emitElapsedTransitions(until: Purchases.date(3), limit: 100) == 1)
                #expect(try await ledger.emitElapsedTransitions(until: Purchases.date(3), limit: 100) == 0)
                let expired = try await Events.drain(ledger).filter { $0.type == .grantExpired }
                #expect(expired.map(\.grant?.id) == [short.id])
                #expect(expired.first?.source == "time" && expired.first?.occurredAt == Purchases.date(2))
                #expect(try await ledger.emitElapsedTransitions(until: Purchases.date(40), limit: 100) == 1)
                #expect(try await Events.drain(ledger).filter { $0.type == .grantExpired }.map(\.grant?.id) == [short.id, long.id])
            }
        }

        @Test("concurrent grants with one key make one grant", arguments: LedgerBackend.all)
        func concurrentReplays(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let outcomes = try await withThrowingTaskGroup(of: GrantOutcome.self) { group in
                    for _ in 0..<6 { group.addTask { try await ledger.grant(request("race")) } }
                    var outcomes: [GrantOutcome] = []
                    for try await outcome in group { outcomes.append(outcome) }
                    return outcomes
                }
                #expect(outcomes.filter { !$0.isReplay }.count == 1)
                #expect(Set(outcomes.map(\.grant.id)).count == 1)
                #expect(try await ledger.grants(for: alice).count == 1)
                #expect(try await Events.drain(ledger).map(\.type) == [.grantCreated])
            }
        }
    }
}

import Foundation
import StoreGateCore
@testable import StoreGateLedger
import Testing

extension LedgerTests {
    /// The console's reads: an account's timeline newest first and paged, a search by every
    /// identifier a support engineer has, and the overview's counts per day.
    @Suite("Ledger contract: browsing")
    struct Browsing {
        let alice = Purchases.account("alice")
        let bob = Purchases.account("bob")
        static let now = Date().ledgerNormalized
        static let day = 86_400.0

        static func days(_ count: Double) -> Date { now.addingTimeInterval(count * day).ledgerNormalized }

        static func subscription(
            _ id: String, original: String, start: Double, length: Double = 30, revoked: Date? = nil, upgraded: Bool = false,
            webOrder: String? = nil, environment: AppStoreEnvironment = .production
        ) -> VerifiedTransaction {
            Purchases.transaction(
                id, original: original, product: "pro.monthly", type: .autoRenewable, purchased: days(start), expires: days(start + length),
                revoked: revoked, upgraded: upgraded, group: "pro", webOrder: webOrder, environment: environment,
                signed: revoked ?? days(start)
            )
        }

        @Test("an account's timeline is its own events, newest first, in pages that join up", arguments: LedgerBackend.all)
        func timeline(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let alice = self.alice, bob = self.bob
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.consumable("c1", quantity: 5)), for: alice)
                try await ledger.record(Purchases.proof(Purchases.consumable("c2", quantity: 2)), for: bob)
                for index in 1...4 {
                    try await ledger.consume("coins", quantity: 1, idempotencyKey: "k\(index)", for: alice, at: Self.now)
                }
                await expectLedgerError(.ownedByAnotherAccount) { try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1")), for: bob) }

                let all = try await Events.drain(ledger)
                let expected = all.filter { $0.account == alice }.reversed().map(\.id)
                #expect(expected.count == 6)
                #expect(try await ledger.timeline(for: alice, before: nil, limit: 1000).map(\.id) == Array(expected))

                var paged: [String] = []
                var cursor: Int64?
                while true {
                    let page = try await ledger.timeline(for: alice, before: cursor, limit: 4)
                    guard let last = page.last else { break }
                    #expect(page.count <= 4)
                    paged += page.map(\.id)
                    cursor = last.sequence
                }
                #expect(paged == Array(expected))
                #expect(try await ledger.timeline(for: bob, before: nil, limit: 10).map(\.type) == [.proofRefused, .consumableCredited])
                #expect(try await ledger.timeline(for: Purchases.account("nobody"), before: nil, limit: 10).isEmpty)

                await expectLedgerError(.invalidArgument) { _ = try await ledger.timeline(for: alice, before: nil, limit: 0) }
                await expectLedgerError(.invalidArgument) { _ = try await ledger.timeline(for: alice, before: nil, limit: maximumEventPage + 1) }
                await expectLedgerError(.invalidArgument) { _ = try await ledger.timeline(for: alice, before: 0, limit: 10) }
            }
        }

        @Test("a search finds transactions by id, original id, web order line item id and app account token", arguments: LedgerBackend.all)
        func search(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let alice = self.alice, bob = self.bob
                // The default policy: an account whose id is a UUID has that token.
                let token = UUID()
                let holder = Purchases.account(token.uuidString)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1", token: token)), for: holder)
                try await ledger.record(Purchases.proof([
                    Self.subscription("s1", original: "s1", start: -40, webOrder: "w1"),
                    Self.subscription("s2", original: "s1", start: -10, webOrder: "w2"),
                ]), for: alice)
                try await ledger.record(Purchases.proof([Self.subscription("x1", original: "x1", start: -5, environment: .sandbox)], environment: .sandbox), for: bob)

                #expect(try await ledger.search("s1", limit: 50).map(\.transactionId) == ["s2", "s1"])
                #expect(try await ledger.search("s2", limit: 50).map(\.transactionId) == ["s2"])
                #expect(try await ledger.search("  w2\n", limit: 50).map(\.transactionId) == ["s2"])
                let byToken = try await ledger.search(token.uuidString.lowercased(), limit: 50)
                #expect(byToken.map(\.transactionId) == ["n1"])
                #expect(byToken.first?.account == holder)
                let sandbox = try await ledger.search("x1", limit: 50)
                #expect(sandbox.map(\.transactionId) == ["x1"])
                #expect(sandbox.first?.environment == .sandbox)
                #expect(sandbox.first?.account == bob)
                #expect(try await ledger.search("s1", limit: 1).map(\.transactionId) == ["s2"])
                #expect(try await ledger.search("nothing-like-it", limit: 50).isEmpty)
                #expect(try await ledger.search(UUID().uuidString, limit: 50).isEmpty)
                // Search terms are values, never SQL.
                #expect(try await ledger.search("s1' OR '1'='1", limit: 50).isEmpty)

                await expectLedgerError(.invalidArgument) { _ = try await ledger.search("   ", limit: 50) }
                await expectLedgerError(.invalidArgument) { _ = try await ledger.search(String(repeating: "7", count: maximumSearchTermLength + 1), limit: 50) }
                await expectLedgerError(.invalidArgument) { _ = try await ledger.search("s1", limit: 0) }
            }
        }

        @Test("the overview counts each day's purchases, renewals, refunds and active subscriptions", arguments: LedgerBackend.all)
        func activity(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let alice = self.alice, bob = self.bob
                let periods = [
                    Self.subscription("a1", original: "a1", start: -50),
                    Self.subscription("a2", original: "a1", start: -20),  // a renewal: active through the window's days
                    Self.subscription("b1", original: "b1", start: -3.5, length: 2),  // over before today
                    Self.subscription("u1", original: "u1", start: -6, upgraded: true),  // upgraded away: never counted
                    Self.subscription("r1", original: "r1", start: -8, revoked: Self.days(-4.25)),  // refunded 4¼ days ago
                ]
                try await ledger.record(Purchases.proof(Array(periods[0...1])), for: alice)
                for period in periods[2...3] { try await ledger.record(Purchases.proof(period), for: bob) }
                // r1 bought, then its refund learned later: one transaction.revoked event.
                try await ledger.record(Purchases.proof(Self.subscription("r1", original: "r1", start: -8)), for: bob)
                try await ledger.record(Purchases.proof(periods[4]), for: bob)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1")), for: alice)

                let activity = try await ledger.activity(days: 10, endingAt: Self.now)
                #expect(activity.count == 10)
                let calendar = { () -> Calendar in var c = Calendar(identifier: .gregorian); c.timeZone = TimeZone(identifier: "UTC")!; return c }()
                #expect(activity.last?.day == calendar.startOfDay(for: Self.now))
                #expect(zip(activity, activity.dropFirst()).allSatisfy { $1.day.timeIntervalSince($0.day) == Self.day })

                // Ground truth, day by day: a period counts at a day's end when it began at or
                // before it and neither expired nor was revoked by then.
                let recorded = try await Events.drain(ledger)
                for entry in activity {
                    let end = entry.day.addingTimeInterval(Self.day)
                    let active = periods.filter { period in
                        !period.isUpgraded && period.purchaseDate <= end && end < min(period.expiresDate!, period.revocationDate ?? .distantFuture)
                    }
                    #expect(entry.activeSubscriptions == active.count, "active at the end of \(entry.day)")
                    let ofDay = recorded.filter { $0.recordedAt >= entry.day && $0.recordedAt < end }
                    #expect(entry.purchases == ofDay.filter { $0.type == .purchaseRecorded }.count)
                    #expect(entry.renewals == ofDay.filter { $0.type == .subscriptionRenewed }.count)
                    #expect(entry.refunds == ofDay.filter { $0.type == .transactionRevoked }.count)
                }
                // Everything was recorded within the window, so nothing is lost between days.
                #expect(activity.map(\.purchases).reduce(0, +) == recorded.filter { $0.type == .purchaseRecorded }.count)
                #expect(activity.map(\.refunds).reduce(0, +) == 1)
                #expect(activity.map(\.activeSubscriptions).max() == 2)

                await expectLedgerError(.invalidArgument) { _ = try await ledger.activity(days: 0, endingAt: Self.now) }
                await expectLedgerError(.invalidArgument) { _ = try await ledger.activity(days: 367, endingAt: Self.now) }
            }
        }
    }
}

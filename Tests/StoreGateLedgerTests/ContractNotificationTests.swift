import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Notifications: idempotent by UUID, ordered by signing date whatever the delivery order.
    @Suite("Ledger contract: notifications")
    struct Notifications {
        let alice = Purchases.account("alice")

        @Test("a notification delivered twice is taken once", arguments: LedgerBackend.all)
        func duplicates(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0)), for: alice)
                let renew = Purchases.notification("n1", type: "DID_RENEW", signed: Purchases.date(30), transaction: Purchases.period("s2", original: "s1", start: 30))
                let first = try await ledger.apply(renew)
                #expect(!first.isDuplicate)
                #expect(first.account == alice)
                #expect(first.transactionId == "s2")
                let second = try await ledger.apply(renew)
                #expect(second.isDuplicate)
                let status = try #require(try await ledger.entitlements(for: alice, at: Purchases.date(45)).subscription(inGroup: "pro"))
                #expect(status.state == .active)
                #expect(status.notifications.map(\.notificationUUID) == ["n1"])
                #expect(status.transactions.last?.source == .notification)
            }
        }

        /// Renewal, a refund of it, the refund reversed, then auto-renew switched off.
        static let history: [VerifiedNotification] = [
            Purchases.notification("n-renew", type: "DID_RENEW", signed: Purchases.date(30),
                                   transaction: Purchases.period("s2", original: "s1", start: 30, signed: Purchases.date(30)),
                                   renewal: Purchases.renewal(original: "s1", signed: Purchases.date(30))),
            Purchases.notification("n-refund", type: "REFUND", signed: Purchases.date(40),
                                   transaction: Purchases.period("s2", original: "s1", start: 30, revoked: Purchases.date(40), signed: Purchases.date(40))),
            Purchases.notification("n-reversed", type: "REFUND_REVERSED", signed: Purchases.date(50),
                                   transaction: Purchases.period("s2", original: "s1", start: 30, signed: Purchases.date(50))),
            Purchases.notification("n-off", type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: Purchases.date(52),
                                   renewal: Purchases.renewal(original: "s1", willRenew: false, signed: Purchases.date(52))),
        ]

        static func permutations<T>(_ items: [T]) -> [[T]] {
            guard items.count > 1 else { return [items] }
            return items.indices.flatMap { index -> [[T]] in
                var rest = items
                let head = rest.remove(at: index)
                return permutations(rest).map { [head] + $0 }
            }
        }

        @Test("every delivery order of the same notifications ends in the same state", arguments: LedgerBackend.all)
        func anyOrder(backend: LedgerBackend) async throws {
            let orders = Self.permutations(Self.history)
            var states: Set<Entitlements> = []
            for order in backend.kind == .postgres ? Array(orders.prefix(6)) + Array(orders.suffix(2)) : orders {
                let state = try await backend.withLedger { ledger async throws in
                    try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0)), for: alice)
                    for notification in order + order.prefix(2) { try await ledger.apply(notification) }
                    return try await ledger.entitlements(for: alice, at: Purchases.date(55))
                }
                states.insert(state)
            }
            #expect(states.count == 1)
            let status = try #require(states.first?.subscription(inGroup: "pro"))
            #expect(status.state == .active)
            #expect(status.willAutoRenew == false)
            #expect(status.transactions.last?.revocationDate == nil)
            #expect(status.notifications.map(\.notificationUUID) == ["n-renew", "n-refund", "n-reversed", "n-off"])
        }

        @Test("a refund notification revokes its transaction even without a revocation date in it", arguments: LedgerBackend.all)
        func refundWithoutDate(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("t1")), for: alice)
                try await ledger.apply(Purchases.notification("n1", type: "REVOKE", signed: Purchases.date(2), transaction: Purchases.nonConsumable("t1", signed: Purchases.date(2))))
                let held = try await ledger.entitlements(for: alice, at: Purchases.date(3))
                #expect(held.ownedNonConsumables.isEmpty)
                #expect(held.nonConsumables.first?.transactions.first?.revocationDate == Purchases.date(2))
                #expect(held.nonConsumables.first?.notifications.map(\.notificationType) == ["REVOKE"])
            }
        }

        @Test("a notification about a purchase no account recorded yet waits for the first account to record it", arguments: LedgerBackend.all)
        func notificationBeforeRecord(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let refund = Purchases.notification("n1", type: "REFUND", signed: Purchases.date(2),
                                                    transaction: Purchases.consumable("c1", quantity: 2, revoked: Purchases.date(2), signed: Purchases.date(2)))
                let outcome = try await ledger.apply(refund)
                #expect(outcome.account == nil)
                #expect(try await ledger.transaction("c1", in: .production)?.account == nil)
                let renewal = Purchases.notification("n2", type: "SUBSCRIBED", signed: Purchases.date(0), transaction: Purchases.period("s1", original: "s1", start: 0))
                try await ledger.apply(renewal)
                // The (older) purchase proof arrives: alice claims both families; the refund stands.
                let recorded = try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 2), Purchases.period("s1", original: "s1", start: 0)]), for: alice)
                #expect(recorded.updatedTransactionIds == ["c1", "s1"])
                let held = try await ledger.entitlements(for: alice, at: Purchases.date(3))
                #expect(held.consumables.first?.balance == ConsumableBalance(productId: "coins", purchased: 0, refunded: 2, consumed: 0))
                #expect(held.subscription(inGroup: "pro")?.state == .active)
                #expect(held.subscription(inGroup: "pro")?.notifications.map(\.notificationUUID) == ["n2"])
                #expect(try await ledger.checkIntegrity().isHealthy)
                await expectLedgerError(.ownedByAnotherAccount) {
                    try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0)), for: Purchases.account("bob"))
                }
            }
        }
    }
}

import Foundation
import StoreGateCore
@testable import StoreGateLedger
import StoreGateLedgerPostgres
import Testing

extension LedgerTests {
    /// The outbox: every change appends exactly its events in the same transaction, refused or
    /// failed operations append nothing (a refusal only its own event), sequences grow in
    /// commit order and a cursor pages through them.
    @Suite("Ledger contract: events")
    struct Events {
        let alice = Purchases.account("alice")
        let bob = Purchases.account("bob")

        /// The real clock when the suite started: events state the entitlement at recording time.
        static let now = Date().ledgerNormalized

        static func daysFromNow(_ days: Double) -> Date {
            now.addingTimeInterval(days * Purchases.day).ledgerNormalized
        }

        static func period(_ id: String, original: String, start: Double, days: Double = 30, revoked: Date? = nil) -> VerifiedTransaction {
            Purchases.transaction(
                id, original: original, product: "pro.monthly", type: .autoRenewable, purchased: daysFromNow(start),
                expires: daysFromNow(start + days), revoked: revoked, group: "pro", signed: revoked ?? daysFromNow(start)
            )
        }

        /// Reads every event after `cursor`, in pages of `page`.
        /// PostgreSQL numbers an event once every older write transaction of the server has
        /// ended; other tests' databases share the server (a `CREATE DATABASE` on a loaded
        /// machine outlasts a read's one-second wait), so tests wait for numbering here.
        static func settle(_ ledger: Any) async throws {
            if let postgres = ledger as? PostgresLedger { try await postgres.settleEvents(within: .seconds(60)) }
        }

        static func drain(_ ledger: any Ledger, after cursor: Int64 = 0, page: Int = 1000) async throws -> [LedgerEvent] {
            try await settle(ledger)
            var events: [LedgerEvent] = []
            var last = cursor
            while true {
                let batch = try await ledger.events(after: last, limit: page)
                guard let end = batch.last else { return events }
                events += batch
                last = end.sequence
            }
        }

        /// Runs `operation` and returns the events it appended.
        static func appended(_ ledger: any Ledger, _ operation: () async throws -> Void) async throws -> [LedgerEvent] {
            let before = try await drain(ledger).last?.sequence ?? 0
            try await operation()
            return try await drain(ledger, after: before)
        }

        @Test("each operation appends exactly its events, with the entitlement after it", arguments: LedgerBackend.all)
        func eachOperation(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let alice = self.alice, bob = self.bob
                // A non-consumable: bought, then recorded again (nothing new).
                let lifetime = Purchases.proof(Purchases.nonConsumable("n1"))
                var events = try await Self.appended(ledger) { try await ledger.record(lifetime, for: alice) }
                #expect(events.map(\.type) == [.purchaseRecorded])
                #expect(events.first?.account == alice)
                #expect(events.first?.transactionId == "n1")
                #expect(events.first?.source == ProofKind.signedTransaction.rawValue)
                #expect(events.first?.entitlement == LedgerEvent.Entitlement(productType: .nonConsumable, isEntitled: true))
                #expect(events.first?.occurredAt == Purchases.t0)
                #expect(try await Self.appended(ledger) { try await ledger.record(lifetime, for: alice) }.isEmpty)

                // Another account's attempt: only the refusal.
                events = try await Self.appended(ledger) {
                    await expectLedgerError(.ownedByAnotherAccount) { try await ledger.record(lifetime, for: bob) }
                }
                #expect(events.map(\.type) == [.proofRefused])
                #expect(events.first?.account == bob)
                #expect(events.first?.refusal == "owned_by_another_account")
                #expect(events.first?.entitlement == nil)

                // A refused argument: nothing.
                let wrongEnvironment = Purchases.proof([Purchases.nonConsumable("n2")], environment: .sandbox)
                #expect(try await Self.appended(ledger) {
                    await expectLedgerError(.environmentMismatch) { try await ledger.record(wrongEnvironment, for: alice) }
                }.isEmpty)

                // A consumable: credited, consumed, a replay and a refusal append nothing more.
                events = try await Self.appended(ledger) { try await ledger.record(Purchases.proof(Purchases.consumable("c1", quantity: 3)), for: alice) }
                #expect(events.map(\.type) == [.consumableCredited])
                #expect(events.first?.quantity == 3)
                #expect(events.first?.entitlement?.balance == ConsumableBalance(productId: "coins", purchased: 3, refunded: 0, consumed: 0))
                #expect(events.first?.entitlement?.isEntitled == true)
                events = try await Self.appended(ledger) {
                    _ = try await ledger.consume("coins", quantity: 2, idempotencyKey: "k1", for: alice, at: Purchases.date(1))
                    _ = try await ledger.consume("coins", quantity: 2, idempotencyKey: "k1", for: alice, at: Purchases.date(2))
                    await expectLedgerError(.insufficientBalance) {
                        try await ledger.consume("coins", quantity: 5, idempotencyKey: "k2", for: alice, at: Purchases.date(2))
                    }
                }
                #expect(events.map(\.type) == [.consumableConsumed])
                #expect(events.first?.idempotencyKey == "k1")
                #expect(events.first?.quantity == 2)
                #expect(events.first?.occurredAt == Purchases.date(1))
                #expect(events.first?.environment == nil)
                #expect(events.first?.entitlement?.balance == ConsumableBalance(productId: "coins", purchased: 3, refunded: 0, consumed: 2))

                // Its refund after use: the balance shows the debt.
                events = try await Self.appended(ledger) {
                    try await ledger.apply(Purchases.notification(
                        "n-refund-c1", type: "REFUND", signed: Purchases.date(3),
                        transaction: Purchases.consumable("c1", quantity: 3, revoked: Purchases.date(3), signed: Purchases.date(3))))
                }
                #expect(events.map(\.type) == [.transactionRevoked])
                #expect(events.first?.notificationType == "REFUND")
                #expect(events.first?.notificationUUID == "n-refund-c1")
                #expect(events.first?.revocationReason == 0)
                #expect(events.first?.entitlement?.balance == ConsumableBalance(productId: "coins", purchased: 0, refunded: 3, consumed: 2))
                #expect(events.first?.entitlement?.isEntitled == false)

                // A subscription whose first period ended: recorded as expired.
                let first = Self.period("s1", original: "s1", start: -40)
                events = try await Self.appended(ledger) {
                    try await ledger.record(Purchases.proof(first, renewal: Purchases.renewal(original: "s1", signed: Self.daysFromNow(-40))), for: alice)
                }
                #expect(events.map(\.type) == [.purchaseRecorded])
                #expect(events.first?.entitlement?.state == .expired)
                #expect(events.first?.entitlement?.willAutoRenew == true)

                // Renewed by a notification: a renewal and the move to active.
                events = try await Self.appended(ledger) {
                    try await ledger.apply(Purchases.notification(
                        "n-renew", type: "DID_RENEW", signed: Self.daysFromNow(-10), transaction: Self.period("s2", original: "s1", start: -10)))
                }
                #expect(events.map(\.type) == [.subscriptionRenewed, .subscriptionStateChanged])
                #expect(events.last?.previousState == .expired)
                #expect(events.last?.entitlement?.state == .active)
                #expect(events.last?.transactionId == "s2")
                #expect(events.allSatisfy { $0.entitlement?.isEntitled == true && $0.entitlement?.expiresDate == Self.daysFromNow(20) })

                // Auto-renew off, then a duplicate delivery of it: one event.
                let off = Purchases.notification(
                    "n-off", type: "DID_CHANGE_RENEWAL_STATUS", subtype: "AUTO_RENEW_DISABLED", signed: Self.daysFromNow(-5),
                    renewal: Purchases.renewal(original: "s1", willRenew: false, signed: Self.daysFromNow(-5)))
                events = try await Self.appended(ledger) {
                    try await ledger.apply(off)
                    try await ledger.apply(off)
                }
                #expect(events.map(\.type) == [.autoRenewDisabled])
                #expect(events.first?.entitlement?.willAutoRenew == false)
                #expect(events.first?.occurredAt == Self.daysFromNow(-5))

                // Refunded: revoked, and the subscription leaves active.
                events = try await Self.appended(ledger) {
                    try await ledger.apply(Purchases.notification(
                        "n-refund", type: "REFUND", signed: Self.daysFromNow(-1),
                        transaction: Self.period("s2", original: "s1", start: -10, revoked: Self.daysFromNow(-1))))
                }
                #expect(events.map(\.type) == [.transactionRevoked, .subscriptionStateChanged])
                #expect(events.last?.previousState == .active)
                #expect(events.last?.entitlement?.state == .revoked)
                #expect(events.allSatisfy { $0.entitlement?.isEntitled == false })
                let now = try await ledger.entitlements(for: alice, at: Date()).subscription(inGroup: "pro")
                #expect(now?.state == events.last?.entitlement?.state)

                // Reversed: reinstated and active again.
                events = try await Self.appended(ledger) {
                    try await ledger.apply(Purchases.notification(
                        "n-reversed", type: "REFUND_REVERSED", signed: Self.daysFromNow(-0.5),
                        transaction: Self.period("s2", original: "s1", start: -10)))
                }
                #expect(events.map(\.type) == [.transactionReinstated, .subscriptionStateChanged])
                #expect(events.last?.entitlement?.state == .active)

                // A purchase only a notification mentioned waits, and is bob's when his proof claims it.
                let unowned = Purchases.nonConsumable("n9", product: "pro.extra")
                #expect(try await Self.appended(ledger) {
                    try await ledger.apply(Purchases.notification("n-unowned", type: "ONE_TIME_CHARGE", signed: Purchases.t0, transaction: unowned))
                }.isEmpty)
                events = try await Self.appended(ledger) { try await ledger.record(Purchases.proof(unowned), for: bob) }
                #expect(events.map(\.type) == [.purchaseRecorded])
                #expect(events.first?.account == bob)

                // The whole stream: increasing sequences, unique ids, the same in small pages.
                let all = try await Self.drain(ledger)
                #expect(all.count == 14)
                #expect(zip(all, all.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
                #expect(Set(all.map(\.id)).count == all.count)
                #expect(all.allSatisfy { UUID(uuidString: $0.id) != nil && $0.id == $0.id.lowercased() }, "\(all.map(\.id).prefix(2))")
                #expect(try await Self.drain(ledger, page: 2) == all)
                #expect(try await ledger.events(after: all.last?.sequence ?? 0, limit: 10).isEmpty)
                #expect(try await ledger.events(after: all[3].sequence, limit: 2) == Array(all[4...5]))
            }
        }

        @Test("one proof of several purchases appends each purchase's event in one transaction", arguments: LedgerBackend.all)
        func severalInOneProof(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let proof = Purchases.proof([
                    Purchases.nonConsumable("a1"), Purchases.consumable("a2", quantity: 2),
                    Self.period("a3", original: "a3", start: -60), Self.period("a4", original: "a3", start: -30),
                    Self.period("a5", original: "a3", start: -1),
                ], kind: .appReceipt)
                try await ledger.record(proof, for: alice)
                let events = try await Self.drain(ledger)
                #expect(events.map(\.type).sorted() == [
                    .consumableCredited, .purchaseRecorded, .purchaseRecorded, .subscriptionRenewed, .subscriptionRenewed,
                ])
                #expect(events.allSatisfy { $0.source == "app_receipt" && $0.recordedAt == events[0].recordedAt })
                let subscription = events.filter { $0.entitlement?.productType == .autoRenewable }
                #expect(subscription.map(\.transactionId) == ["a3", "a4", "a5"])
                #expect(subscription.allSatisfy { $0.entitlement?.state == .active && $0.entitlement?.productId == "pro.monthly" })
            }
        }

        @Test("a page out of range is refused", arguments: LedgerBackend.all)
        func invalidPages(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                await expectLedgerError(.invalidArgument) { try await ledger.events(after: -1, limit: 10) }
                await expectLedgerError(.invalidArgument) { try await ledger.events(after: 0, limit: 0) }
                await expectLedgerError(.invalidArgument) { try await ledger.events(after: 0, limit: maximumEventPage + 1) }
                #expect(try await ledger.events(after: 0, limit: maximumEventPage).isEmpty)
            }
        }

        @Test("events and their cursor survive reopening; sequences keep growing", arguments: LedgerBackend.persistent)
        func survivesReopening(backend: LedgerBackend) async throws {
            try await backend.withStore { store async throws in
                let first = try await store.open()
                try await first.record(Purchases.proof(Purchases.nonConsumable("n1")), for: alice)
                let before = try await Self.drain(first)
                await first.close()
                let second = try await store.open()
                #expect(try await Self.drain(second) == before)
                #expect(try await second.lastEventSequence() == before.last?.sequence)
                try await second.record(Purchases.proof(Purchases.consumable("c1")), for: alice)
                let after = try await Self.drain(second, after: before.last?.sequence ?? 0)
                #expect(after.map(\.type) == [.consumableCredited])
                #expect((after.first?.sequence ?? 0) > (before.last?.sequence ?? 0))
            }
        }

        @Test("concurrent writers: one event per change, sequences unique and increasing, nothing lost", arguments: LedgerBackend.all)
        func concurrentWriters(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let accounts = (0..<8).map { Purchases.account("user-\($0)") }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for (index, account) in accounts.enumerated() {
                        group.addTask {
                            for purchase in 0..<5 {
                                try await ledger.record(Purchases.proof(Purchases.consumable("c-\(index)-\(purchase)", quantity: 2)), for: account)
                                _ = try await ledger.consume("coins", quantity: 1, idempotencyKey: "k-\(purchase)", for: account, at: Purchases.t0)
                            }
                        }
                    }
                    try await group.waitForAll()
                }
                let events = try await Self.drain(ledger)
                #expect(events.count == 80)
                #expect(try await ledger.lastEventSequence() == events.last?.sequence, "the stream's end is the newest event read")
                #expect(zip(events, events.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
                for account in accounts {
                    // Per account, the stream replays the balance exactly.
                    let mine = events.filter { $0.account == account }
                    var expected = ConsumableBalance(productId: "coins", purchased: 0, refunded: 0, consumed: 0)
                    for event in mine {
                        if event.type == .consumableCredited { expected.purchased += 2 } else { expected.consumed += 1 }
                        #expect(event.entitlement?.balance == expected)
                    }
                    #expect(mine.count == 10)
                }
            }
        }
    }
}

@Suite("Ledger events: stored form")
struct LedgerEventStoredFormTests {
    @Test("an event reads back from its stored JSON as written")
    func roundTrip() throws {
        let event = LedgerEvent(
            id: "0d1c", sequence: 0, type: .subscriptionStateChanged, account: Purchases.account("a \"quoted\" <b>"),
            productId: "pro.monthly", environment: .sandbox, transactionId: "t1", originalTransactionId: "o1",
            occurredAt: Purchases.t0, recordedAt: Purchases.date(1), source: "notification", notificationType: "DID_RENEW",
            notificationSubtype: "BILLING_RECOVERY", notificationUUID: "u1", previousState: .inBillingRetry, revocationReason: 1,
            quantity: 2, idempotencyKey: "k", refusal: nil,
            entitlement: LedgerEvent.Entitlement(
                productType: .autoRenewable, isEntitled: true, state: .active, productId: "pro.yearly", expiresDate: Purchases.date(30),
                willAutoRenew: false, autoRenewProductId: "pro.monthly", balance: nil))
        var read = try LedgerEvent(stored: event.storedJSON, sequence: 42)
        #expect(read.sequence == 42)
        read.sequence = 0
        #expect(read == event)
        var consumable = event
        consumable.entitlement = LedgerEvent.Entitlement(
            productType: .consumable, isEntitled: true, balance: ConsumableBalance(productId: "pro.monthly", purchased: 3, refunded: 1, consumed: 1))
        #expect(try LedgerEvent(stored: consumable.storedJSON, sequence: 0) == consumable)
    }

    @Test("a stored event that is not one is a storage error, not a guess")
    func malformed() throws {
        for text in ["", "[]", "{}", #"{"id":"x","type":"t"}"#, #"{"id":"x","type":"t","account":"a","quantity":"2"}"#,
                     #"{"id":"x","type":"t","account":"a","entitlement":{"isEntitled":"yes"}}"#] {
            #expect(throws: LedgerError.self) { try LedgerEvent(stored: Array(text.utf8), sequence: 1) }
        }
    }
}

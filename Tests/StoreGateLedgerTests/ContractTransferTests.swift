import Foundation
import StoreGateCore
@testable import StoreGateLedger
import Testing

extension LedgerTests {
    /// Transfers (issue 28 item 4): under `STOREGATE_TRANSFER_POLICY=transfer` a purchase family
    /// another account presents moves to it, whole, in one transaction, with an event on each
    /// account; under `refuse` nothing changes; a family bound to an `appAccountToken` never
    /// moves to another token; support moves a family by hand.
    @Suite("Ledger contract: transfers")
    struct Transfers {
        let alice = Purchases.account("alice")
        let bob = Purchases.account("bob")
        let carol = Purchases.account("carol")

        /// The ledger's clock: mid-way through the first subscription period.
        static let now = Purchases.date(10)

        static func configuration(_ policy: TransferPolicy, tokens: AppAccountTokenPolicy = .accountIDIsUUID) -> LedgerConfiguration {
            LedgerConfiguration(accountTokenPolicy: tokens, transferPolicy: policy, now: { Self.now })
        }

        static func move(_ original: String, to account: AccountID, reason: String = "ticket 42: new account", by actor: String = "support") -> TransferRequest {
            TransferRequest(environment: .production, originalTransactionId: original, account: account, reason: reason, transferredBy: actor, date: Self.now)
        }

        func transferEvents(_ events: [LedgerEvent]) -> [LedgerEvent] {
            events.filter { $0.type == .purchaseTransferred }
        }

        // MARK: The refuse policy

        @Test("under refuse, another account's proof of an owned purchase is refused as before: 409, proof.refused, nothing moves", arguments: LedgerBackend.all)
        func refusePolicyUnchanged(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.refuse)) { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.period("s1", original: "s1", start: 0), Purchases.nonConsumable("n1")]), for: alice)
                let error = await expectLedgerError(.ownedByAnotherAccount) {
                    try await ledger.record(Purchases.proof([Purchases.period("s1", original: "s1", start: 0)], kind: .appReceipt), for: bob)
                }
                #expect(error?.transactionId == "s1")
                #expect(try await ledger.transaction("s1", in: .production)?.account == alice)
                #expect(try await ledger.entitlements(for: bob, at: Self.now).subscriptions.isEmpty)
                #expect(try await ledger.entitlements(for: alice, at: Self.now).subscription(inGroup: "pro")?.isEntitled == true)
                let events = try await Events.drain(ledger)
                #expect(transferEvents(events).isEmpty)
                #expect(events.filter { $0.account == bob }.map(\.type) == [.proofRefused])
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        // MARK: The transfer policy

        @Test("under transfer, a restore by another account moves the whole family: every transaction, its renewal info, both events", arguments: LedgerBackend.all)
        func restoreMovesTheFamily(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.transfer)) { ledger async throws in
                let s1 = Purchases.period("s1", original: "s1", start: 0)
                try await ledger.record(Purchases.proof([s1], renewal: Purchases.renewal(original: "s1", signed: Purchases.date(0))), for: alice)
                let s2 = Purchases.period("s2", original: "s1", start: 30)
                try await ledger.apply(Purchases.notification("renew-s2", type: "DID_RENEW", signed: Purchases.date(30), transaction: s2))
                let before = try await Events.drain(ledger)
                #expect(before.map(\.type) == [.purchaseRecorded, .subscriptionRenewed])

                // Bob restores on his device: the receipt lists the original purchase only.
                let outcome = try await ledger.record(Purchases.proof([s1], kind: .appReceipt), for: bob)
                #expect(outcome.transferredOriginalTransactionIds == ["s1"])
                #expect(outcome.newTransactionIds.isEmpty && outcome.updatedTransactionIds == ["s1"] && !outcome.isDuplicate)
                #expect(try await ledger.transaction("s1", in: .production)?.account == bob)
                #expect(try await ledger.transaction("s2", in: .production)?.account == bob, "transactions the proof did not carry move too")
                #expect(try await ledger.entitlements(for: alice, at: Self.now).subscriptions.isEmpty)
                let bobs = try #require(try await ledger.entitlements(for: bob, at: Self.now).subscription(inGroup: "pro"))
                #expect(bobs.isEntitled && bobs.transactions.map(\.transactionId) == ["s1", "s2"])
                #expect(bobs.willAutoRenew == true, "the renewal info is the family's and goes with it")

                let moved = try await Events.drain(ledger, after: before.last?.sequence ?? 0)
                #expect(moved.map(\.type) == [.purchaseTransferred, .purchaseTransferred])
                let out = try #require(moved.first), into = try #require(moved.last)
                #expect(out.account == alice && into.account == bob)
                #expect(out.transfer?.direction == .outgoing && into.transfer?.direction == .incoming)
                #expect(out.transfer?.id == into.transfer?.id && out.id != into.id)
                #expect(out.transfer?.from == alice && out.transfer?.to == bob && into.transfer?.from == alice && into.transfer?.to == bob)
                #expect(out.transfer?.actor == nil && out.transfer?.reason == nil, "a restore has no actor")
                #expect(out.transactionId == nil && out.originalTransactionId == "s1" && into.transactionId == nil && into.originalTransactionId == "s1")
                #expect(out.source == ProofKind.appReceipt.rawValue && out.occurredAt == Self.now)
                #expect(out.entitlement?.isEntitled == false && out.entitlement?.state == nil)
                #expect(into.entitlement?.isEntitled == true && into.entitlement?.state == .active)

                // The same restore again changes nothing; later renewals accrue to the new owner.
                #expect(try await ledger.record(Purchases.proof([s1], kind: .appReceipt), for: bob).isDuplicate)
                let s3 = Purchases.period("s3", original: "s1", start: 60)
                #expect(try await ledger.apply(Purchases.notification("renew-s3", type: "DID_RENEW", signed: Purchases.date(60), transaction: s3)).account == bob)
                let later = try await Events.drain(ledger, after: moved.last?.sequence ?? 0)
                #expect(later.map(\.type) == [.subscriptionRenewed] && later.first?.account == bob)
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        @Test("a restore that carries a new renewal moves the family and records the renewal on the new owner", arguments: LedgerBackend.all)
        func restoreWithNewFacts(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.transfer)) { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0)), for: alice)
                let first = try await Events.drain(ledger)
                let outcome = try await ledger.record(Purchases.proof(Purchases.period("s2", original: "s1", start: 30)), for: bob)
                #expect(outcome.newTransactionIds == ["s2"] && outcome.transferredOriginalTransactionIds == ["s1"])
                let events = try await Events.drain(ledger, after: first.last?.sequence ?? 0)
                #expect(events.map(\.type) == [.purchaseTransferred, .purchaseTransferred, .subscriptionRenewed])
                #expect(events.map(\.account) == [alice, bob, bob])
                #expect(events.last?.transactionId == "s2")
            }
        }

        @Test("a non-consumable moves and the old account loses it; moving it back is another transfer", arguments: LedgerBackend.all)
        func nonConsumableMovesBackAndForth(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.transfer)) { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1")), for: alice)
                try await ledger.record(Purchases.proof([Purchases.nonConsumable("n1")], kind: .appReceipt), for: bob)
                #expect(try await ledger.entitlements(for: alice, at: Self.now).ownedNonConsumables.isEmpty)
                #expect(try await ledger.entitlements(for: bob, at: Self.now).ownedNonConsumables == ["pro.lifetime"])
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1")), for: alice)
                #expect(try await ledger.entitlements(for: alice, at: Self.now).ownedNonConsumables == ["pro.lifetime"])
                #expect(try await ledger.entitlements(for: bob, at: Self.now).ownedNonConsumables.isEmpty)
                let moves = transferEvents(try await Events.drain(ledger))
                #expect(moves.map(\.account) == [alice, bob, bob, alice])
                #expect(moves.map { $0.entitlement?.isEntitled } == [false, true, false, true])
                #expect(moves.map { $0.entitlement?.productType } == Array(repeating: .nonConsumable, count: 4))
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        // MARK: Consumables

        @Test("a consumable's units move; units the old account used leave with it as used, so no unit is spent twice", arguments: LedgerBackend.all)
        func consumableUnitsMove(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.transfer)) { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 10), Purchases.consumable("c2", quantity: 5)]), for: alice)
                try await ledger.consume("coins", quantity: 12, idempotencyKey: "k1", for: alice, at: Self.now)
                // Alice could still spend 3. Her other purchase (5) covers 5 of the 12 she used;
                // the other 7 were units of c1, which leave with it as used.
                let before = try await Events.drain(ledger)
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 10)], kind: .appReceipt), for: bob)
                let alices = try await ledger.balance(of: "coins", for: alice)
                let bobs = try await ledger.balance(of: "coins", for: bob)
                #expect(alices == ConsumableBalance(productId: "coins", purchased: 5, refunded: 0, consumed: 5))
                #expect(bobs == ConsumableBalance(productId: "coins", purchased: 10, refunded: 0, consumed: 7))
                #expect(alices.available + bobs.available == 3, "the units spendable on both accounts do not grow")
                await expectLedgerError(.insufficientBalance) { try await ledger.consume("coins", quantity: 4, idempotencyKey: "k2", for: bob, at: Self.now) }
                #expect(try await ledger.consume("coins", quantity: 3, idempotencyKey: "k3", for: bob, at: Self.now).remaining == 0)

                let moved = try await Events.drain(ledger, after: before.last?.sequence ?? 0).filter { $0.type == .purchaseTransferred }
                #expect(moved.map(\.account) == [alice, bob])
                #expect(moved.map(\.quantity) == [10, 10])
                #expect(moved.first?.entitlement?.balance == alices && moved.first?.entitlement?.isEntitled == false)
                #expect(moved.last?.entitlement?.balance == bobs && moved.last?.entitlement?.isEntitled == true)
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        @Test("a consumable the old account never used moves whole; a refunded one moves no units and leaves its refund debt behind", arguments: LedgerBackend.all)
        func consumableEdgeCases(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.transfer)) { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 4)]), for: alice)
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 4)]), for: bob)
                #expect(try await ledger.balance(of: "coins", for: alice) == ConsumableBalance(productId: "coins", purchased: 0, refunded: 0, consumed: 0))
                #expect(try await ledger.balance(of: "coins", for: bob).available == 4)
                // Alice's only purchase, used then refunded: the debt is hers and stays hers.
                try await ledger.record(Purchases.proof([Purchases.consumable("c9", product: "gems", quantity: 2)]), for: alice)
                try await ledger.consume("gems", quantity: 2, idempotencyKey: "g", for: alice, at: Self.now)
                try await ledger.apply(Purchases.notification(
                    "refund-c9", type: "REFUND", signed: Purchases.date(5),
                    transaction: Purchases.consumable("c9", product: "gems", quantity: 2, revoked: Purchases.date(5), signed: Purchases.date(5))
                ))
                try await ledger.record(Purchases.proof([Purchases.consumable("c9", product: "gems", quantity: 2)]), for: bob)
                #expect(try await ledger.balance(of: "gems", for: alice) == ConsumableBalance(productId: "gems", purchased: 0, refunded: 0, consumed: 2))
                #expect(try await ledger.balance(of: "gems", for: bob) == ConsumableBalance(productId: "gems", purchased: 0, refunded: 2, consumed: 0))
                #expect(try await ledger.entitlements(for: alice, at: Self.now).consumables.first { $0.productId == "gems" }?.balance?.refundDebt == 2)
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        // MARK: The token rule

        static let uuidAccount = "6F9619FF-8B86-D011-B42D-00CF4FC964FF"
        static let otherUUIDAccount = "00000000-0000-4000-8000-000000000001"

        @Test("a family bound to an appAccountToken never moves to an account whose token differs, by restore or by hand", arguments: LedgerBackend.all)
        func tokenRule(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.transfer)) { ledger async throws in
                let owner = Purchases.account(Self.uuidAccount)
                let thief = Purchases.account(Self.otherUUIDAccount)
                let token = UUID(uuidString: Self.uuidAccount)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1", token: token)), for: owner)
                // The same receipt presented by another account, with or without the token.
                await expectLedgerError(.appAccountTokenMismatch) {
                    try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1", token: token)), for: thief)
                }
                let refused = await expectLedgerError(.ownedByAnotherAccount) {
                    try await ledger.record(Purchases.proof([Purchases.nonConsumable("n1")], kind: .appReceipt), for: thief)
                }
                #expect(refused?.transactionId == "n1")
                await expectLedgerError(.ownedByAnotherAccount) {
                    try await ledger.record(Purchases.proof([Purchases.nonConsumable("n1")], kind: .appReceipt), for: alice)
                }
                await expectLedgerError(.appAccountTokenMismatch) { try await ledger.transfer(Self.move("n1", to: thief)) }
                await expectLedgerError(.appAccountTokenMismatch) { try await ledger.transfer(Self.move("n1", to: alice)) }
                #expect(try await ledger.transaction("n1", in: .production)?.account == owner)
                #expect(try await ledger.entitlements(for: thief, at: Self.now).ownedNonConsumables.isEmpty)
                let events = try await Events.drain(ledger)
                #expect(transferEvents(events).isEmpty)
                #expect(events.filter { $0.account == thief }.map(\.type) == [.proofRefused])
                #expect(events.first { $0.account == thief }?.refusal == "owned_by_another_account")
            }
        }

        @Test("a token-bound family moves between accounts that share its token", arguments: LedgerBackend.all)
        func sameTokenMoves(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.transfer)) { ledger async throws in
                // Two account ids, one token (the same UUID in either case).
                let upper = Purchases.account(Self.uuidAccount), lower = Purchases.account(Self.uuidAccount.lowercased())
                let token = UUID(uuidString: Self.uuidAccount)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("n1", token: token)), for: upper)
                let outcome = try await ledger.record(Purchases.proof([Purchases.nonConsumable("n1")], kind: .appReceipt), for: lower)
                #expect(outcome.transferredOriginalTransactionIds == ["n1"])
                #expect(try await ledger.transaction("n1", in: .production)?.account == lower)
            }
        }

        // MARK: By hand

        @Test("support moves a family by hand under either policy, audited; again is a no-op; unknown families are not found", arguments: LedgerBackend.all)
        func manualMove(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.refuse)) { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.period("s1", original: "s1", start: 0), Purchases.period("s2", original: "s1", start: 30)]), for: alice)
                let before = try await Events.drain(ledger)
                let outcome = try await ledger.transfer(Self.move("s1", to: bob))
                #expect(outcome.isMoved && outcome.from == alice && outcome.to == bob && outcome.transactionIds == ["s1", "s2"])
                #expect(outcome.environment == .production && outcome.originalTransactionId == "s1")
                let moveId = try #require(outcome.transferId)
                #expect(try await ledger.entitlements(for: bob, at: Self.now).subscription(inGroup: "pro")?.isEntitled == true)
                #expect(try await ledger.entitlements(for: alice, at: Self.now).subscriptions.isEmpty)
                let events = try await Events.drain(ledger, after: before.last?.sequence ?? 0)
                #expect(events.map(\.type) == [.purchaseTransferred, .purchaseTransferred])
                for event in events {
                    #expect(event.source == LedgerEvent.transferSource && event.occurredAt == Self.now)
                    #expect(event.transfer?.id == moveId && event.transfer?.actor == "support" && event.transfer?.reason == "ticket 42: new account")
                }

                let again = try await ledger.transfer(Self.move("s1", to: bob))
                #expect(!again.isMoved && again.from == bob && again.to == bob && again.transferId == nil)
                #expect(try await Events.drain(ledger, after: events.last?.sequence ?? 0).isEmpty)
                // Bob's own restore now just records (his family); Alice's is refused under refuse.
                #expect(try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0)), for: bob).isDuplicate)
                await expectLedgerError(.ownedByAnotherAccount) { try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0)), for: alice) }

                await expectLedgerError(.purchaseNotFound) { try await ledger.transfer(Self.move("nope", to: bob)) }
                await expectLedgerError(.purchaseNotFound) {
                    try await ledger.transfer(TransferRequest(environment: .sandbox, originalTransactionId: "s1", account: carol, reason: "x", transferredBy: "support", date: Self.now))
                }
                // A family only a notification mentioned has no owner to move it from.
                try await ledger.apply(Purchases.notification("n-x", type: "DID_RENEW", signed: Purchases.date(1), transaction: Purchases.period("x2", original: "x1", start: 1)))
                await expectLedgerError(.purchaseNotFound) { try await ledger.transfer(Self.move("x1", to: carol)) }
                await expectLedgerError(.invalidArgument) { try await ledger.transfer(Self.move("s1", to: carol, reason: "")) }
                await expectLedgerError(.invalidArgument) { try await ledger.transfer(Self.move("s1", to: carol, reason: "line\nbreak")) }
                await expectLedgerError(.invalidArgument) { try await ledger.transfer(Self.move("s1", to: carol, by: "")) }
                await expectLedgerError(.invalidArgument) { try await ledger.transfer(Self.move("", to: carol)) }
                #expect(try await ledger.transaction("s1", in: .production)?.account == bob)
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        // MARK: Concurrency

        @Test("two accounts restoring the same purchase at once end with one owner and a consistent chain of moves", arguments: LedgerBackend.all)
        func concurrentRestores(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.transfer)) { ledger async throws in
                let families = (0..<6).map { "f\($0)" }
                for family in families {
                    try await ledger.record(Purchases.proof(Purchases.nonConsumable(family, product: "p.\(family)")), for: alice)
                }
                // Bob and Carol restore every purchase at once (and two newcomers race for a new one).
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for account in [bob, carol] {
                        group.addTask {
                            for family in families {
                                try await ledger.record(Purchases.proof([Purchases.nonConsumable(family, product: "p.\(family)")], kind: .appReceipt), for: account)
                            }
                        }
                        group.addTask {
                            try await ledger.record(Purchases.proof(Purchases.nonConsumable("new", product: "p.new")), for: account)
                        }
                    }
                    try await group.waitForAll()
                }
                let events = try await Events.drain(ledger)
                for family in families + ["new"] {
                    let owner = try #require(try await ledger.transaction(family, in: .production)?.account)
                    #expect(owner == bob || owner == carol)
                    let holders = try await [alice, bob, carol].asyncFilter { account in
                        try await ledger.entitlements(for: account, at: Self.now).ownedNonConsumables.contains("p.\(family)")
                    }
                    #expect(holders == [owner], "\(family): exactly one account holds it")
                    // The moves form one chain from the first owner to the last.
                    let mine = events.filter { $0.originalTransactionId == family }
                    #expect(mine.filter { $0.type == .purchaseRecorded }.count == 1)
                    var holder = try #require(mine.first { $0.type == .purchaseRecorded }?.account)
                    let moves = mine.filter { $0.type == .purchaseTransferred }
                    #expect(moves.count % 2 == 0)
                    for pair in stride(from: 0, to: moves.count, by: 2) {
                        let out = moves[pair], into = moves[pair + 1]
                        #expect(out.transfer?.direction == .outgoing && into.transfer?.direction == .incoming && out.transfer?.id == into.transfer?.id)
                        #expect(out.account == holder && out.transfer?.from == holder && into.account == into.transfer?.to)
                        holder = into.account
                    }
                    #expect(holder == owner)
                }
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        @Test("a restore racing the old owner's consumptions never lets a unit be spent twice", arguments: LedgerBackend.all)
        func restoreRacingConsumption(backend: LedgerBackend) async throws {
            try await backend.withLedger(Self.configuration(.transfer)) { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.consumable("c1", quantity: 10)), for: alice)
                let spent = try await withThrowingTaskGroup(of: Int.self) { group in
                    for index in 0..<10 {
                        group.addTask {
                            do {
                                return try await ledger.consume("coins", quantity: 1, idempotencyKey: "a\(index)", for: alice, at: Self.now).quantity
                            } catch let error as LedgerError where error.code == .insufficientBalance {
                                return 0
                            }
                        }
                    }
                    group.addTask {
                        try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 10)], kind: .appReceipt), for: bob)
                        return 0
                    }
                    return try await group.reduce(0, +)
                }
                // Bob spends whatever came to him.
                let left = try await ledger.balance(of: "coins", for: bob).available
                if left > 0 { try await ledger.consume("coins", quantity: left, idempotencyKey: "b", for: bob, at: Self.now) }
                #expect(spent + left == 10)
                #expect(try await ledger.balance(of: "coins", for: alice).available == 0)
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }
    }
}

extension Array {
    /// The elements for which `isIncluded` answers true, asked one at a time.
    func asyncFilter(_ isIncluded: (Element) async throws -> Bool) async rethrows -> [Element] {
        var kept: [Element] = []
        for element in self where try await isIncluded(element) { kept.append(element) }
        return kept
    }
}

@Suite("Transfer events: stored form")
struct TransferEventStoredFormTests {
    @Test("a purchase.transferred event reads back from its stored JSON as written, with or without an actor")
    func roundTrip() throws {
        var event = LedgerEvent(
            id: "e1", sequence: 0, type: .purchaseTransferred, account: Purchases.account("bob"), productId: "coins",
            environment: .production, transactionId: "c1", originalTransactionId: "c1", occurredAt: Purchases.t0, recordedAt: Purchases.t0,
            source: LedgerEvent.transferSource, quantity: 4,
            entitlement: LedgerEvent.Entitlement(productType: .consumable, isEntitled: true, balance: ConsumableBalance(productId: "coins", purchased: 4, refunded: 0, consumed: 1)),
            transfer: LedgerEvent.Transfer(id: "m1", direction: .incoming, from: Purchases.account("alice"), to: Purchases.account("bob"), actor: "support", reason: "ticket \"9\"")
        )
        #expect(try LedgerEvent(stored: event.storedJSON, sequence: 0) == event)
        event.transfer?.actor = nil
        event.transfer?.reason = nil
        event.transfer?.direction = .outgoing
        #expect(try LedgerEvent(stored: event.storedJSON, sequence: 0) == event)
        // The entitlement stays last, so PostgreSQL can append a consumable's stored balance.
        let open = String(decoding: event.storedJSON(leavingBalanceOpen: true), as: UTF8.self)
        #expect(open.hasSuffix(#""productType":"Consumable""#))
        #expect(throws: LedgerError(.storage, reason: "")) {
            try LedgerEvent(stored: Array(#"{"id":"x","type":"purchase.transferred","account":"a","transfer":{"id":"m","direction":"sideways","from":"a","to":"b"}}"#.utf8), sequence: 0)
        }
    }
}

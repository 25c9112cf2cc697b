import Foundation
import PropertyBased
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// The hold-out property with transfers: Apple's facts about purchases that move between
    /// accounts, in any arrival order, give every transaction the same event types and both
    /// accounts the same entitlements. Who presented a purchase last is itself a fact (the
    /// customer's), so the presentations keep their order — Alice's before Bob's — while
    /// Apple's facts (renewals, refunds) arrive anywhere around them.
    @Suite("Transfers in any arrival order")
    struct TransferOrder {
        static let alice = Purchases.account("alice")
        static let bob = Purchases.account("bob")

        enum Delivery: Sendable {
            case present(AccountID, [VerifiedTransaction])
            case notify(VerifiedNotification)

            var isPresentation: Bool {
                if case .present = self { return true }
                return false
            }
        }

        /// A story chosen by `flags`: Alice buys a subscription, a non-consumable and a
        /// consumable; Bob restores some of them (the subscription by its first or its latest
        /// period); Apple renews the subscription and perhaps refunds any of them.
        static func story(_ flags: Int) -> [Delivery] {
            func refunded(_ transaction: VerifiedTransaction, day: Double) -> VerifiedTransaction {
                Purchases.transaction(
                    transaction.transactionId, original: transaction.originalTransactionId, product: transaction.productId,
                    type: transaction.productType, quantity: transaction.quantity, purchased: transaction.purchaseDate,
                    expires: transaction.expiresDate, revoked: Purchases.date(day), group: transaction.subscriptionGroupIdentifier,
                    signed: Purchases.date(day)
                )
            }
            func refund(_ transaction: VerifiedTransaction, day: Double) -> Delivery {
                .notify(Purchases.notification("refund-\(transaction.transactionId)", type: "REFUND", signed: Purchases.date(day),
                                               transaction: refunded(transaction, day: day)))
            }
            let p1 = Purchases.period("s1", original: "s1", start: 0)
            let p2 = Purchases.period("s2", original: "s1", start: 30)
            let n1 = Purchases.nonConsumable("n1", at: Purchases.date(1))
            let c1 = Purchases.consumable("c1", quantity: 3, at: Purchases.date(2))
            var deliveries: [Delivery] = [
                .present(alice, [p1]), .present(alice, [n1]), .present(alice, [c1]),
                .notify(Purchases.notification(
                    "renew-s2", type: "DID_RENEW", signed: p2.signedDate, transaction: p2,
                    renewal: Purchases.renewal(original: "s1", signed: p2.signedDate)
                )),
            ]
            if flags & 1 != 0 { deliveries.append(.present(bob, [flags & 2 == 0 ? p1 : p2])) }
            if flags & 4 != 0 { deliveries.append(.present(bob, [n1])) }
            if flags & 8 != 0 { deliveries.append(.present(bob, [c1])) }
            if flags & 16 != 0 { deliveries.append(refund(n1, day: 50)) }
            if flags & 32 != 0 { deliveries.append(refund(c1, day: 51)) }
            if flags & 64 != 0 { deliveries.append(refund(flags & 128 == 0 ? p1 : p2, day: 52)) }
            return deliveries
        }

        /// `deliveries` in the order of `positions`, the presentations then put back in the
        /// story's order (Alice's before Bob's) at the places they took.
        static func arranged(_ deliveries: [Delivery], _ positions: [Int]) -> [Delivery] {
            let permuted = positions.map { deliveries[$0] }
            var presentations = deliveries.filter(\.isPresentation).makeIterator()
            return permuted.map { delivery in delivery.isPresentation ? (presentations.next() ?? delivery) : delivery }
        }

        struct Outcome: Equatable, Sendable {
            var types: [String: [String]]
            var entitlements: [Entitlements]
        }

        static func outcome(_ deliveries: [Delivery], on backend: LedgerBackend) async throws -> Outcome {
            let configuration = LedgerConfiguration(transferPolicy: .transfer, now: { Purchases.date(60) })
            return try await backend.withLedger(configuration) { ledger async throws in
                for delivery in deliveries {
                    switch delivery {
                    case .present(let account, let transactions): try await ledger.record(Purchases.proof(transactions), for: account)
                    case .notify(let notification): try await ledger.apply(notification)
                    }
                }
                let events = try await Events.drain(ledger)
                var types: [String: [String]] = [:]
                // What a receiver granting on a gain or an `in` and revoking on an `out` holds.
                var held: [AccountID: Set<String>] = [:]
                for event in events {
                    if !EventOrder.familyLevel.contains(event.type) {
                        types[event.transactionId ?? "-", default: []].append(event.type.rawValue)
                    }
                    guard let family = event.originalTransactionId else { continue }
                    switch (event.type, event.transfer?.direction) {
                    case (.purchaseRecorded, _), (.consumableCredited, _), (.subscriptionRenewed, _), (.purchaseTransferred, .incoming?):
                        held[event.account, default: []].insert(family)
                    case (.purchaseTransferred, .outgoing?):
                        held[event.account]?.remove(family)
                    default:
                        break
                    }
                }
                types = types.mapValues { [$0[0]] + $0.dropFirst().sorted() }
                var entitlements: [Entitlements] = []
                for account in [alice, bob] {
                    var mine = try await ledger.entitlements(for: account, at: Purchases.date(60))
                    mine.date = Purchases.date(60)
                    let owned = Set((mine.nonConsumables + mine.consumables).flatMap(\.transactions).map(\.originalTransactionId)
                        + mine.subscriptions.flatMap(\.transactions).map(\.originalTransactionId))
                    #expect(held[account, default: []] == owned, "\(account): the events' holder is the ledger's owner")
                    entitlements.append(mine)
                }
                #expect(try await ledger.checkIntegrity().isHealthy)
                return Outcome(types: types, entitlements: entitlements)
            }
        }

        @Test("each transaction gets the same events and both accounts the same entitlements, whatever order Apple's facts arrive in around the moves", arguments: LedgerBackend.all)
        func sameEventsInAnyOrder(backend: LedgerBackend) async {
            let count = backend.kind == .memory ? 60 : backend.kind == .sqlite ? 12 : 4
            await propertyCheck(count: count, input: Gen.int(in: 0...255), Gen.int(in: 0...Int(Int32.max))) { flags, seed in
                let story = Self.story(flags)
                let indices = Array(story.indices)
                let inOrder = try await Self.outcome(story, on: backend)
                let reversed = try await Self.outcome(Self.arranged(story, indices.reversed()), on: backend)
                let random = try await Self.outcome(Self.arranged(story, EventOrder.shuffled(indices, seed: UInt64(seed))), on: backend)
                #expect(reversed == inOrder, "flags \(flags): reversed")
                #expect(random == inOrder, "flags \(flags), seed \(seed)")
                // Bob holds exactly what he restored.
                let bobs = inOrder.entitlements[1]
                #expect(bobs.nonConsumables.isEmpty == (flags & 4 == 0), "flags \(flags)")
                #expect(bobs.subscriptions.isEmpty == (flags & 1 == 0), "flags \(flags)")
                // A move is the family's: it names no transaction.
                let moves = (flags & 1 == 0 ? 0 : 2) + (flags & 4 == 0 ? 0 : 2) + (flags & 8 == 0 ? 0 : 2)
                #expect((inOrder.types["-"] ?? []).count == moves, "flags \(flags)")
                #expect(inOrder.types.values.joined().filter { $0 == "purchase.transferred" }.count == moves, "flags \(flags)")
            }
        }
    }
}

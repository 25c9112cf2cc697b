import Foundation
import PropertyBased
import StoreGateCore
import Logging
import StoreGateEvents
import StoreGateLedger
import StoreGateTestSupport
import Testing

extension LedgerTests {
    /// The same facts in any arrival order give every transaction the same events and the
    /// account the same entitlements (issue 28: a refund the sync recovers before the purchase
    /// it refunds, an upgrade learnt before the period it supersedes).
    @Suite("Events in any arrival order")
    struct EventOrder {
        static let alice = Purchases.account("alice")

        /// One delivery of facts to the ledger.
        enum Delivery: Sendable {
            case record([VerifiedTransaction])
            case notify(VerifiedNotification)

            /// When Apple signed it: the chronological order.
            var signed: Date {
                switch self {
                case .record(let transactions): transactions.map(\.signedDate).max() ?? Purchases.t0
                case .notify(let notification): notification.signedDate
                }
            }
        }

        /// A story chosen by `flags`: a subscription (original, renewal, perhaps an upgrade to
        /// the yearly product), a non-consumable and a consumable, any of them perhaps refunded.
        static func story(_ flags: Int) -> [Delivery] {
            func refunded(_ transaction: VerifiedTransaction, day: Double) -> VerifiedTransaction {
                Purchases.transaction(
                    transaction.transactionId, original: transaction.originalTransactionId, product: transaction.productId,
                    type: transaction.productType, quantity: transaction.quantity, purchased: transaction.purchaseDate,
                    expires: transaction.expiresDate, revoked: Purchases.date(day), upgraded: transaction.isUpgraded,
                    group: transaction.subscriptionGroupIdentifier, signed: Purchases.date(day)
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
            var deliveries: [Delivery] = [.record([p1]), .record([n1]), .record([c1])]
            // The renewal reaches the ledger by the app or by Apple's DID_RENEW.
            if flags & 1 == 0 {
                deliveries.append(.record([p2]))
            } else {
                deliveries.append(.notify(Purchases.notification(
                    "renew-s2", type: "DID_RENEW", signed: p2.signedDate, transaction: p2,
                    renewal: Purchases.renewal(original: "s1", signed: p2.signedDate)
                )))
            }
            var subscriptionRefunds = [p1, p2]
            if flags & 2 != 0 {
                // Upgraded mid-period to the yearly product: the period it left is superseded.
                let upgradedP2 = Purchases.period("s2", original: "s1", start: 30, upgraded: true, signed: Purchases.date(40))
                let p3 = Purchases.period("s3", original: "s1", product: "pro.yearly", start: 40, days: 365)
                deliveries.append(.notify(Purchases.notification(
                    "upgrade-s3", type: "DID_CHANGE_RENEWAL_PREF", subtype: "UPGRADE", signed: Purchases.date(40), transaction: p3,
                    renewal: Purchases.renewal(original: "s1", product: "pro.yearly", signed: Purchases.date(40))
                )))
                deliveries.append(.record([upgradedP2, p3]))
                // Apple's later observations of the period keep saying it was upgraded.
                subscriptionRefunds = [p1, upgradedP2, p3]
            }
            if flags & 4 != 0 { deliveries.append(refund(n1, day: 50)) }
            if flags & 8 != 0 { deliveries.append(refund(c1, day: 51)) }
            if flags & 16 != 0 { deliveries.append(refund(subscriptionRefunds[(flags >> 6) % subscriptionRefunds.count], day: 52)) }
            if flags & 32 != 0 {
                deliveries.append(.notify(Purchases.notification(
                    "revoke-n1", type: "REVOKE", signed: Purchases.date(53), transaction: refunded(n1, day: 53)
                )))
            }
            return deliveries.sorted { $0.signed < $1.signed }
        }

        /// A shuffle of `items` driven by `seed` (the same seed, the same order).
        static func shuffled<T>(_ items: [T], seed: UInt64) -> [T] {
            var generator = SplitMix64(seed: seed)
            return items.shuffled(using: &generator)
        }

        /// What one arrival order produced: each transaction's event types (its gain first),
        /// the account's entitlements at the end, and the catalog's entitlements replayed from
        /// `entitlement.changed` alone.
        struct Outcome: Equatable, Sendable {
            var types: [String: [String]]
            var entitlements: Entitlements
            var replayed: [String: String]
        }

        /// What a consumer of entitlement.changed knows of an entitlement: active until when, or not.
        static func state(_ item: EntitlementSnapshot.Item?) -> String {
            guard let item, item.isActive else { return "inactive" }
            return "active until \(item.expiresAt.map { "\($0.ledgerMilliseconds)" } ?? "never")"
        }

        /// The app's entitlements in these stories.
        static let catalog = ProductCatalog(entitlements: [
            "pro": EntitlementDefinition(products: ["pro.monthly", "pro.yearly"]),
            "lifetime": EntitlementDefinition(products: ["pro.lifetime"]),
            "gems": EntitlementDefinition(currency: ["coins": 5]),
        ])

        /// Family-level events (a state computed at the time of recording) are not facts of one
        /// transaction: which of them appear depends on when the facts arrived; nor are the
        /// entitlement changes (compared by their replay).
        static let familyLevel: Set<LedgerEvent.EventType> = [
            .subscriptionStateChanged, .autoRenewEnabled, .autoRenewDisabled, .renewalProductChanged,
        ]

        static func outcome(_ deliveries: [Delivery], on backend: LedgerBackend) async throws -> Outcome {
            try await backend.withLedger { ledger async throws in
                // The tracker looks after every delivery, as a running service's would (on
                // PostgreSQL once at the end: numbering the stream waits for every older
                // transaction of the server the other tests share).
                let tracker = EntitlementTracker(
                    ledger: ledger, catalog: { Self.catalog }, holder: "tracker", logger: Logger(label: "test.tracker"), now: { Purchases.date(60) }
                )
                try await tracker.initializePlace()
                let trackEach = backend.kind != .postgres
                for delivery in deliveries {
                    switch delivery {
                    case .record(let transactions): try await ledger.record(Purchases.proof(transactions), for: alice)
                    case .notify(let notification): try await ledger.apply(notification)
                    }
                    if trackEach { while try await tracker.track() {} }
                }
                try await Events.settle(ledger)
                while try await tracker.track() { try await Events.settle(ledger) }
                var types: [String: [String]] = [:]
                var announced: [String: EntitlementSnapshot.Item] = [:]
                var after: Int64 = 0
                while true {
                    let page = try await ledger.events(after: after, limit: 100)
                    guard let last = page.last else { break }
                    after = last.sequence
                    for event in page where event.type == .entitlementChanged {
                        if let change = event.change { announced[change.entitlement] = change.after }
                    }
                    for event in page where !familyLevel.contains(event.type) && event.type != .entitlementChanged {
                        types[event.transactionId ?? "-", default: []].append(event.type.rawValue)
                    }
                }
                // A transaction's gain comes first in any order; its refund and its upgrade may
                // come in either order (as their facts did), so they are compared as a set.
                types = types.mapValues { [$0[0]] + $0.dropFirst().sorted() }
                var entitlements = try await ledger.entitlements(for: alice, at: Purchases.date(60))
                entitlements.date = Purchases.date(60)
                // Replaying entitlement.changed alone gives the catalog's entitlements now.
                let resolved = EntitlementResolver.resolve(entitlements, catalog: Self.catalog, at: Purchases.date(60))
                var replayed: [String: String] = [:]
                for entitlement in resolved {
                    replayed[entitlement.identifier] = Self.state(announced[entitlement.identifier])
                    #expect(replayed[entitlement.identifier] == Self.state(EntitlementSnapshot.Item(entitlement)), "\(entitlement.identifier)")
                }
                return Outcome(types: types, entitlements: entitlements, replayed: replayed)
            }
        }

        @Test("each transaction gets the same events and the account the same entitlements, whatever the arrival order", arguments: LedgerBackend.all)
        func sameEventsInAnyOrder(backend: LedgerBackend) async {
            let count = backend.kind == .memory ? 60 : backend.kind == .sqlite ? 12 : 4
            await propertyCheck(count: count, input: Gen.int(in: 0...127), Gen.int(in: 0...Int(Int32.max))) { flags, seed in
                let story = Self.story(flags)
                let chronological = try await Self.outcome(story, on: backend)
                let reversed = try await Self.outcome(story.reversed(), on: backend)
                let random = try await Self.outcome(Self.shuffled(story, seed: UInt64(seed)), on: backend)
                #expect(reversed == chronological, "flags \(flags): reversed")
                #expect(random == chronological, "flags \(flags), seed \(seed)")
                // A consumer that grants on a gain and takes back on a refund or an upgrade
                // ends with exactly the products the ledger says the account is entitled to.
                var granted: Set<String> = []
                for (transaction, types) in chronological.types where transaction != "-" {
                    if types.contains("purchase.recorded") || types.contains("subscription.renewed") || types.contains("consumable.credited") { granted.insert(transaction) }
                    if types.contains("transaction.revoked") || types.contains("subscription.upgraded") { granted.remove(transaction) }
                }
                let standing = Set(
                    (chronological.entitlements.nonConsumables + chronological.entitlements.consumables).flatMap(\.transactions)
                        .filter { !$0.isRevoked }.map(\.transactionId)
                        + chronological.entitlements.subscriptions.flatMap(\.transactions).filter { !$0.isRevoked && !$0.isUpgraded }.map(\.transactionId)
                )
                #expect(granted == standing, "flags \(flags)")
            }
        }
    }
}

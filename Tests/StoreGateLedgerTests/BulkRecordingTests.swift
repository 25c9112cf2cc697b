import Foundation
import StoreGateCore
@testable import StoreGateLedger
import StoreGateTestSupport
import Testing

extension LedgerTests {
    /// The bulk path (``BulkRecording``) writes exactly what the normal path writes: one random
    /// story told once through `record`/`apply` (the clock at each fact's time) and once through
    /// `recordInBulk` in a few batches leaves the same outcomes, entitlements, balances,
    /// transactions, events (in the same order, their ids in the same order), timelines,
    /// search results, activity, rollups, and a healthy integrity check.
    @Suite("Bulk recording writes what the normal path writes")
    struct BulkRecordingTests {
        static let accounts = (0..<6).map { Purchases.account("bulk-\($0)") }
        static let consumables = ["coins.small", "coins.large"]

        /// A story of subscriptions (renewals by proof and by `DID_RENEW`, refunds, renewal
        /// turned off, billing failures), non-consumables, consumables, duplicates, another
        /// account's purchase (refused, with its event), an inconsistent transaction and an
        /// invalid one (refused without events), and a notification before its purchase.
        static func story(seed: UInt64) -> [LedgerFact] {
            var random = SplitMix64(seed: seed)
            func roll(_ n: Int) -> Int { Int(random.next() % UInt64(n)) }
            var facts: [LedgerFact] = []
            var day = 0.0
            func at() -> Date {
                day += Double(roll(5)) / 4 + 0.01
                return Purchases.date(day)
            }
            var families: [(account: AccountID, original: String, periods: Int)] = []
            var recorded: [(account: AccountID, transaction: VerifiedTransaction)] = []
            for step in 0..<70 {
                let account = accounts[roll(accounts.count)]
                let date = at()
                switch roll(12) {
                case 0, 1:
                    let original = "sub-\(step)"
                    let period = Purchases.transaction(
                        original, original: original, product: "pro.monthly", type: .autoRenewable, purchased: date,
                        expires: date.addingTimeInterval(30 * Purchases.day), group: "pro", signed: date
                    )
                    facts.append(.record(Purchases.proof(period), for: account, receivedAt: date))
                    families.append((account, original, 1))
                    recorded.append((account, period))
                case 2, 3:
                    guard !families.isEmpty else { continue }
                    let index = roll(families.count)
                    let family = families[index]
                    families[index].periods += 1
                    let id = "\(family.original)-r\(family.periods)"
                    let period = Purchases.transaction(
                        id, original: family.original, product: "pro.monthly", type: .autoRenewable, purchased: date,
                        expires: date.addingTimeInterval(30 * Purchases.day), group: "pro", signed: date
                    )
                    recorded.append((family.account, period))
                    if roll(2) == 0 {
                        facts.append(.record(Purchases.proof(period), for: family.account, receivedAt: date))
                    } else {
                        let renewal = Purchases.renewal(original: family.original, signed: date)
                        facts.append(.notification(
                            Purchases.notification("renew-\(id)", type: "DID_RENEW", signed: date, transaction: period, renewal: renewal),
                            receivedAt: date
                        ))
                    }
                case 4:
                    guard !families.isEmpty else { continue }
                    let family = families[roll(families.count)]
                    let billing = roll(2) == 0
                    let renewal = Purchases.renewal(original: family.original, willRenew: billing, billingRetry: billing, signed: date)
                    facts.append(.notification(
                        Purchases.notification(
                            "renewal-\(step)", type: billing ? "DID_FAIL_TO_RENEW" : "DID_CHANGE_RENEWAL_STATUS",
                            subtype: billing ? nil : "AUTO_RENEW_DISABLED", signed: date, renewal: renewal
                        ),
                        receivedAt: date
                    ))
                case 5, 6, 7:
                    let product = consumables[roll(consumables.count)]
                    let transaction = Purchases.transaction(
                        "c-\(step)", product: product, type: .consumable, quantity: 1 + roll(5), purchased: date, signed: date
                    )
                    facts.append(.record(Purchases.proof(transaction), for: account, receivedAt: date))
                    recorded.append((account, transaction))
                case 8:
                    let transaction = Purchases.nonConsumable("n-\(step)", product: "pro.lifetime.\(roll(2))", at: date)
                    facts.append(.record(Purchases.proof(transaction), for: account, receivedAt: date))
                    recorded.append((account, transaction))
                case 9:
                    // A refund of anything recorded (the notification may be taken twice).
                    guard !recorded.isEmpty else { continue }
                    let (_, original) = recorded[roll(recorded.count)]
                    let refunded = Purchases.transaction(
                        original.transactionId, original: original.originalTransactionId, product: original.productId,
                        type: original.productType, quantity: original.quantity, purchased: original.purchaseDate,
                        expires: original.expiresDate, revoked: date, group: original.subscriptionGroupIdentifier, signed: date
                    )
                    let notification = Purchases.notification("refund-\(step)", type: "REFUND", signed: date, transaction: refunded)
                    facts.append(.notification(notification, receivedAt: date))
                    if roll(3) == 0 { facts.append(.notification(notification, receivedAt: at())) }
                case 10:
                    // The same proof again (a duplicate), or another account's purchase (refused).
                    guard !recorded.isEmpty else { continue }
                    let (owner, transaction) = recorded[roll(recorded.count)]
                    let other = accounts.first { $0 != owner } ?? owner
                    facts.append(.record(Purchases.proof(transaction), for: roll(2) == 0 ? owner : other, receivedAt: date))
                default:
                    switch roll(3) {
                    case 0:
                        // An inconsistent observation: a known transaction id with another product.
                        guard let last = recorded.last else { continue }
                        let (owner, transaction) = last
                        let changed = Purchases.transaction(
                            transaction.transactionId, original: transaction.originalTransactionId, product: "other.product",
                            type: transaction.productType, purchased: transaction.purchaseDate, signed: date
                        )
                        facts.append(.record(Purchases.proof(changed), for: owner, receivedAt: date))
                    case 1:
                        // Invalid: an identifier longer than the ledger takes.
                        let invalid = Purchases.consumable(String(repeating: "x", count: 300), product: "coins.small", at: date)
                        facts.append(.record(Purchases.proof(invalid), for: account, receivedAt: date))
                    default:
                        // A purchase Apple announces before the app records it.
                        let transaction = Purchases.nonConsumable("early-\(step)", product: "pro.lifetime.0", at: date)
                        facts.append(.notification(
                            Purchases.notification("early-\(step)", type: "ONE_TIME_CHARGE", signed: date, transaction: transaction),
                            receivedAt: date
                        ))
                        facts.append(.record(Purchases.proof(transaction), for: account, receivedAt: at()))
                    }
                }
            }
            // At least one refusal with its event, one invalid fact and one duplicate notification,
            // whatever the seed.
            let first = Purchases.nonConsumable("tail-owned", product: "pro.lifetime.0", at: at())
            facts.append(.record(Purchases.proof(first), for: accounts[0], receivedAt: at()))
            facts.append(.record(Purchases.proof(first), for: accounts[1], receivedAt: at()))
            let invalid = Purchases.consumable(String(repeating: "z", count: 300), product: "coins.small", at: at())
            facts.append(.record(Purchases.proof(invalid), for: accounts[2], receivedAt: at()))
            let announced = Purchases.nonConsumable("tail-announced", product: "pro.lifetime.1", at: at())
            let notification = Purchases.notification("tail-announced", type: "ONE_TIME_CHARGE", signed: announced.signedDate, transaction: announced)
            facts.append(.notification(notification, receivedAt: at()))
            facts.append(.notification(notification, receivedAt: at()))
            return facts
        }

        /// Everything observable of a ledger after the story.
        struct Observed: Equatable {
            var outcomes: [String]
            var entitlements: [Entitlements]
            /// ``Ledger/entitlementFacts(for:at:)``'s holdings (the story has no grants).
            var holdings: [Entitlements]
            var balances: [ConsumableBalance]
            var transactions: [RecordedTransaction?]
            /// The events with their ids blanked, and each id's rank among the ids.
            var events: [LedgerEvent]
            var idRanks: [Int]
            var timelines: [[LedgerEvent]]
            var search: [[RecordedTransaction]]
            var activity: [DailyActivity]
            var rollups: [Rollup]
            var summedRollups: [Rollup]
            var isHealthy: Bool
        }

        static func describe(_ outcome: LedgerFactOutcome) -> String {
            switch outcome {
            case .recorded(let outcome): "recorded \(outcome)"
            case .applied(let outcome): "applied \(outcome)"
            case .failed(let error): "failed \(error.code)"
            }
        }

        static func blanked(_ events: [LedgerEvent]) -> [LedgerEvent] {
            events.map { event in
                var event = event
                event.id = ""
                return event
            }
        }

        static func observe(_ ledger: any Ledger, outcomes: [LedgerFactOutcome], story: [LedgerFact]) async throws -> Observed {
            let end = (story.last?.receivedAt ?? Purchases.t0).addingTimeInterval(Purchases.day)
            try await LedgerTests.Events.settle(ledger)
            let events = try await LedgerTests.Events.drain(ledger)
            let sortedIds = events.map(\.id).sorted()
            var observed = Observed(
                outcomes: outcomes.map(describe), entitlements: [], holdings: [], balances: [], transactions: [],
                events: blanked(events), idRanks: events.map { id in sortedIds.firstIndex(of: id.id) ?? -1 },
                timelines: [], search: [], activity: [], rollups: [], summedRollups: [], isHealthy: false
            )
            for account in accounts {
                var entitlements = try await ledger.entitlements(for: account, at: end)
                entitlements.date = end
                observed.entitlements.append(entitlements)
                let facts = try await ledger.entitlementFacts(for: account, at: end)
                #expect(facts.grants.isEmpty)
                var holdings = facts.holdings
                holdings.date = end
                observed.holdings.append(holdings)
                for product in consumables { observed.balances.append(try await ledger.balance(of: product, for: account)) }
                observed.timelines.append(blanked(try await ledger.timeline(for: account, before: nil, limit: 500)))
                observed.search.append(try await ledger.search(account.rawValue, limit: 100))
            }
            for fact in story {
                guard case .record(let proof, _, _) = fact else { continue }
                for transaction in proof.transactions {
                    observed.transactions.append(try await ledger.transaction(transaction.transactionId, in: .production))
                }
            }
            observed.search.append(try await ledger.search("sub-", limit: 100))
            observed.activity = try await ledger.activity(days: 60, endingAt: end)
            let through = end.ledgerMilliseconds / 86_400_000 + 1
            // Compared as sets: the order of rows a backend returns is not part of its contract.
            observed.rollups = try await ledger.rollups(Set(RollupMeasure.allCases), environment: .production, from: nil, through: through)
                .sorted { "\($0)" < "\($1)" }
            observed.summedRollups = try await ledger.rollups(
                Set(RollupMeasure.allCases), environment: .production, from: nil, through: through, keeping: []
            ).sorted { "\($0)" < "\($1)" }
            observed.isHealthy = try await ledger.checkIntegrity().isHealthy
            return observed
        }

        /// Tells `story` through the normal path, the clock at each fact's time.
        static func normal(_ story: [LedgerFact], on backend: LedgerBackend) async throws -> Observed {
            let clock = TestClock(Purchases.t0)
            let configuration = LedgerConfiguration(now: { clock.now })
            return try await backend.withLedger(configuration) { ledger async throws in
                var outcomes: [LedgerFactOutcome] = []
                for fact in story {
                    clock.now = fact.receivedAt
                    do throws(LedgerError) {
                        switch fact {
                        case .record(let proof, let account, _): outcomes.append(.recorded(try await ledger.record(proof, for: account)))
                        case .notification(let notification, _): outcomes.append(.applied(try await ledger.apply(notification)))
                        }
                    } catch {
                        outcomes.append(.failed(error))
                    }
                }
                return try await observe(ledger, outcomes: outcomes, story: story)
            }
        }

        /// Tells `story` through the bulk path, in batches of `batch`.
        static func bulk(_ story: [LedgerFact], batch: Int, on backend: LedgerBackend) async throws -> Observed {
            try await backend.withLedger { ledger async throws in
                let bulk = try #require(ledger as? any BulkRecording)
                var outcomes: [LedgerFactOutcome] = []
                var start = 0
                while start < story.count {
                    let end = min(story.count, start + batch)
                    outcomes += try await bulk.recordInBulk(Array(story[start..<end]))
                    start = end
                }
                return try await observe(ledger, outcomes: outcomes, story: story)
            }
        }

        @Test("a random story leaves the same ledger through both paths", arguments: LedgerBackend.all)
        func sameLedger(backend: LedgerBackend) async throws {
            let seeds: [UInt64] = backend.kind == .postgres ? [7] : [7, 12_345]
            for seed in seeds {
                let story = Self.story(seed: seed)
                let normal = try await Self.normal(story, on: backend)
                // The story's kinds of fact are all there (else the comparison proves little).
                #expect(normal.outcomes.contains { $0.hasPrefix("failed owned_by_another_account") })
                #expect(normal.outcomes.contains { $0.hasPrefix("failed invalid_argument") })
                #expect(normal.outcomes.contains { $0.hasPrefix("applied") && $0.contains("isDuplicate: true") })
                #expect(normal.isHealthy)
                #expect(!normal.rollups.isEmpty)
                #expect(normal.events.count > 50)
                #expect(normal.timelines.allSatisfy { !$0.isEmpty })
                for batch in [story.count, 16] {
                    let bulk = try await Self.bulk(story, batch: batch, on: backend)
                    #expect(bulk.outcomes == normal.outcomes, "seed \(seed), batch \(batch)")
                    #expect(bulk.entitlements == normal.entitlements, "seed \(seed), batch \(batch)")
                    #expect(bulk.holdings == normal.holdings, "seed \(seed), batch \(batch)")
                    #expect(bulk.balances == normal.balances, "seed \(seed), batch \(batch)")
                    #expect(bulk.transactions == normal.transactions, "seed \(seed), batch \(batch)")
                    #expect(bulk.events == normal.events, "seed \(seed), batch \(batch)")
                    #expect(bulk.idRanks == normal.idRanks, "seed \(seed), batch \(batch)")
                    #expect(bulk.timelines == normal.timelines, "seed \(seed), batch \(batch)")
                    #expect(bulk.search == normal.search, "seed \(seed), batch \(batch)")
                    #expect(bulk.activity == normal.activity, "seed \(seed), batch \(batch)")
                    #expect(bulk.rollups == normal.rollups, "seed \(seed), batch \(batch)")
                    #expect(bulk.summedRollups == normal.summedRollups, "seed \(seed), batch \(batch)")
                    #expect(bulk.isHealthy, "seed \(seed), batch \(batch)")
                }
            }
        }

        @Test("a fact that fails writes nothing but its refusal event, and the others of its batch go on", arguments: LedgerBackend.all)
        func failingFactAlone(backend: LedgerBackend) async throws {
            let alice = Self.accounts[0], bob = Self.accounts[1]
            let t1 = Purchases.date(1), t2 = Purchases.date(2), t3 = Purchases.date(3)
            let owned = Purchases.nonConsumable("bulk-owned", at: t1)
            let invalid = Purchases.consumable(String(repeating: "y", count: 300), at: t2)
            let coins = Purchases.consumable("bulk-coins", product: "coins.small", quantity: 3, at: t3)
            try await backend.withLedger { ledger async throws in
                let bulk = try #require(ledger as? any BulkRecording)
                let outcomes = try await bulk.recordInBulk([
                    .record(Purchases.proof(owned), for: alice, receivedAt: t1),
                    .record(Purchases.proof(owned), for: bob, receivedAt: t2),
                    .record(Purchases.proof(invalid), for: bob, receivedAt: t2),
                    .record(Purchases.proof(coins), for: bob, receivedAt: t3),
                ])
                #expect(outcomes.count == 4)
                #expect(outcomes[0].error == nil)
                #expect(outcomes[1].error?.code == .ownedByAnotherAccount)
                #expect(outcomes[2].error?.code == .invalidArgument)
                #expect(outcomes[3].error == nil)
                #expect(try await ledger.balance(of: "coins.small", for: bob).available == 3)
                #expect(try await ledger.entitlements(for: bob, at: t3).nonConsumables.isEmpty)
                let events = try await LedgerTests.Events.drain(ledger)
                #expect(events.map(\.type) == [.purchaseRecorded, .proofRefused, .consumableCredited])
                #expect(events.map(\.recordedAt) == [t1, t2, t3].map(\.ledgerNormalized))
                #expect(try await bulk.recordInBulk([]).isEmpty)
            }
        }
    }
}

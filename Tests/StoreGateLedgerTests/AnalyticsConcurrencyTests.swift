import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Issue 29 item 4 under concurrent writers: the rollups the write path keeps must equal a
    /// full recomputation when several writers change the same purchase families at once
    /// (purchases, renewals, refunds and renewal-only notifications of one original
    /// transaction, from several tasks and two ledger instances).
    @Suite("Analytics: rollups under concurrent writers")
    struct AnalyticsConcurrency {
        typealias Story = AnalyticsStory

        /// The facts of one family: a trial, paid renewals, a refund of one of them, and
        /// renewal-info changes (some before any transaction arrives).
        static func facts(family: String, account: String) -> [Story.Fact] {
            let usd = { (price: Int64, reason: String) in Story.money(price, "USD", "USA", reason: reason) }
            let trial = Story.money(0, "USD", "USA", reason: "PURCHASE", offer: 1, discount: "FREE_TRIAL")
            var facts: [Story.Fact] = [
                .notify(Purchases.notification("\(family)-status-0", type: "DID_CHANGE_RENEWAL_STATUS", signed: Story.at(0.5),
                    renewal: Story.renewal(family, willRenew: false, intent: 1, signed: 0.5))),
                .record(account, Purchases.proof(Story.period("\(family)-t", family, "pro.monthly", 0, 7, trial))),
            ]
            for index in 0..<5 {
                let start = 7 + Double(index) * 30
                facts.append(.record(account, Purchases.proof(
                    Story.period("\(family)-p\(index)", family, "pro.monthly", start, start + 30, usd(9990, index == 0 ? "PURCHASE" : "RENEWAL"))
                )))
                facts.append(.notify(Purchases.notification("\(family)-renew-\(index)", type: "DID_RENEW", signed: Story.at(start + 0.25),
                    transaction: Story.period("\(family)-p\(index)", family, "pro.monthly", start, start + 30,
                                              usd(9990, index == 0 ? "PURCHASE" : "RENEWAL"), signed: start + 0.25),
                    renewal: Story.renewal(family, willRenew: true, signed: start + 0.25))))
                facts.append(.notify(Purchases.notification("\(family)-status-\(index + 1)", type: "DID_FAIL_TO_RENEW", signed: Story.at(start + 29),
                    renewal: Story.renewal(family, willRenew: index % 2 == 0, intent: 2, billingRetry: index % 2 == 0, signed: start + 29))))
            }
            facts.append(.notify(Purchases.notification("\(family)-refund", type: "REFUND", signed: Story.at(40),
                transaction: Story.period("\(family)-p1", family, "pro.monthly", 37, 67, usd(9990, "RENEWAL"), revoked: 40))))
            return facts
        }

        /// The facts of `families` (``facts(family:account:)``, the n-th family's account
        /// `accounts` followed by n), interleaved so every family has several writers at once.
        static func interleaved(families: [String], accounts: String) -> [Story.Fact] {
            let perFamily = families.enumerated().map { Self.facts(family: $0.element, account: "\(accounts)\($0.offset)") }
            var facts: [Story.Fact] = []
            for index in 0..<(perFamily.map(\.count).max() ?? 0) {
                for list in perFamily where index < list.count { facts.append(list[index]) }
            }
            return facts
        }

        /// Tells `fact`, retrying a retryable storage failure (nothing of it was written).
        static func tell(_ fact: Story.Fact, to ledger: any Ledger) async throws {
            let deadline = ContinuousClock.now + .seconds(20)
            while true {
                do {
                    try await Story.tell([fact], to: ledger)
                    return
                } catch let error as LedgerError where error.isRetryable && ContinuousClock.now < deadline {
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
        }

        @Test("concurrent writes to the same families keep the rollups equal to a rebuild", arguments: LedgerBackend.all)
        func sameFamilies(backend: LedgerBackend) async throws {
            try await backend.withStore { store in
                let configuration = LedgerConfiguration(catalog: Story.catalog)
                let ledgers = [try await store.open(configuration), try await store.open(configuration)]
                for round in 0..<3 {
                    let facts = Self.interleaved(families: (0..<3).map { "r\(round)-f\($0)" }, accounts: "a")
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for (index, fact) in facts.enumerated() {
                            let ledger = ledgers[index % ledgers.count]
                            group.addTask { try await Self.tell(fact, to: ledger) }
                        }
                        try await group.waitForAll()
                    }
                }
                let incremental = try await Story.allRollups(ledgers[0])
                #expect(!incremental.isEmpty)
                try await ledgers[0].rebuildRollups()
                let rebuilt = try await Story.allRollups(ledgers[0])
                #expect(incremental == rebuilt)
                if incremental != rebuilt {
                    let before = Dictionary(uniqueKeysWithValues: incremental.map { ($0.key, $0.value) })
                    let after = Dictionary(uniqueKeysWithValues: rebuilt.map { ($0.key, $0.value) })
                    for key in Set(before.keys).union(after.keys).sorted() where before[key] != after[key] {
                        Issue.record("\(key): incremental \(String(describing: before[key])), rebuilt \(String(describing: after[key]))")
                    }
                }
            }
        }
    }
}

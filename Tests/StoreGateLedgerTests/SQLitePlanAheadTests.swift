import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// SQLite plans a record or notification before it reaches the busy writer thread, from rows
/// a reader saw (`SQLiteLedger.planAhead`). The writer must take that plan only when the rows
/// it loads are the ones the plan came from: a plan made from rows that changed in between is
/// thrown away and made again, so planning ahead never decides anything planning on the
/// writer would not.
@Suite("SQLite: plans made ahead of the writer")
struct SQLitePlanAheadTests {
    typealias Story = LedgerTests.AnalyticsStory

    static func open(_ planning: SQLiteLedger.Options.PlanningAhead, catalog: ProductCatalog = ProductCatalog()) throws -> SQLiteLedger {
        var options = SQLiteLedger.Options()
        options.planningAhead = planning
        let path = try TemporaryFiles.directory("plan-ahead").appendingPathComponent("ledger.sqlite").path
        // One clock for every ledger: events of a notification occur when it is received.
        let now = Story.at(400)
        return try SQLiteLedger(path: path, configuration: LedgerConfiguration(catalog: catalog, now: { now }), options: options)
    }

    /// A plan made ahead for `proof`, then the write with it, after `between` ran.
    static func recordWithPlanMadeBefore(
        _ proof: VerifiedProof, for account: AccountID, on ledger: SQLiteLedger, between: () async throws -> Void
    ) async throws -> (ahead: SQLiteLedger.PlannedWrite<RecordOutcome>, result: Result<RecordOutcome, LedgerError>) {
        let planner = ledger.planner
        let now = ledger.configuration.now()
        let prepared = try planner.prepare(proof, for: account, receivedAt: now)
        let ahead = try #require(
            await ledger.planAhead(families: prepared.familyKeys, transactions: prepared.transactionKeys) { state throws(LedgerError) in
                try planner.plan(prepared, state: state)
            }
        )
        try await between()
        let counts = ledger.plansAhead
        let result = try await ledger.write { connection throws(LedgerError) in
            try SQLiteLedger.record(prepared, planner: planner, ahead: ahead, counts: counts, at: now, connection)
        }
        return (ahead, result)
    }

    @Test("a plan made before the same purchase was recorded is made again: the purchase stays recorded once")
    func staleInsertIsReplanned() async throws {
        let ledger = try Self.open(.always)
        let proof = Purchases.proof(Purchases.nonConsumable("family-1"))
        let buyer = Purchases.account("buyer")
        let (ahead, result) = try await Self.recordWithPlanMadeBefore(proof, for: buyer, on: ledger) {
            try await ledger.record(proof, for: buyer)
        }
        // Taken, that plan would have inserted the transaction a second time.
        #expect(ahead.outcome.newTransactionIds == ["family-1"])
        let outcome = try result.get()
        #expect(outcome.newTransactionIds.isEmpty)
        #expect(outcome.unchangedTransactionIds == ["family-1"])
        #expect(ledger.plansAhead.counts == (taken: 1, replanned: 1))
        let events = try await ledger.events(after: 0, limit: 100)
        #expect(events.filter { $0.transactionId == "family-1" }.count == 1)
        #expect(try await ledger.checkIntegrity().problems.isEmpty)
        await ledger.close()
    }

    @Test("a plan made while a purchase had no owner is made again once another account owns it: refused, not given away")
    func staleOwnershipIsReplanned() async throws {
        let ledger = try Self.open(.always)
        let proof = Purchases.proof(Purchases.nonConsumable("family-2"))
        let owner = Purchases.account("owner")
        let other = Purchases.account("other")
        let (ahead, result) = try await Self.recordWithPlanMadeBefore(proof, for: other, on: ledger) {
            try await ledger.record(proof, for: owner)
        }
        #expect(ahead.outcome.account == other)
        #expect(ahead.outcome.newTransactionIds == ["family-2"])
        #expect(throws: LedgerError.self) { try result.get() }
        if case .failure(let error) = result { #expect(error.code == .ownedByAnotherAccount) }
        #expect(ledger.plansAhead.counts == (taken: 1, replanned: 1))
        #expect(try await ledger.entitlements(for: other, at: Purchases.t0).ownedNonConsumables.isEmpty)
        #expect(try await ledger.entitlements(for: owner, at: Purchases.t0).ownedNonConsumables.count == 1)
        await ledger.close()
    }

    /// The events as both ledgers must agree on them (their ids and recording times differ).
    static func eventFacts(_ ledger: SQLiteLedger) async throws -> [String] {
        try await ledger.events(after: 0, limit: 1000).map {
            "\($0.sequence) \($0.type) \($0.account) \($0.productId) \($0.transactionId ?? "-") \($0.occurredAt) \($0.source) \($0.notificationType ?? "-")"
        }
    }

    @Test(
        "planned ahead or on the writer, the same facts give the same entitlements, events and rollups, in story order or shuffled",
        arguments: [nil, 7, 28] as [UInt64?]
    )
    func sameLedgerEitherWay(shuffledWith seed: UInt64?) async throws {
        let ahead = try Self.open(.always, catalog: Story.catalog)
        let writer = try Self.open(.never, catalog: Story.catalog)
        let story = (0..<3).flatMap { LedgerTests.AnalyticsConcurrency.facts(family: "f\($0)", account: "a\($0)") }
        var facts = story
        if let seed {
            var random = SplitMix64(seed: seed)
            facts.shuffle(using: &random)
        }
        try await Story.tell(facts, to: ahead)
        try await Story.tell(facts, to: writer)
        #expect(ahead.plansAhead.counts == (taken: facts.count, replanned: 0))
        #expect(writer.plansAhead.counts == (taken: 0, replanned: 0))
        for account in ["a0", "a1", "a2"] {
            for days in [0.0, 10, 50, 100, 200] {
                let aheadHoldings = try await ahead.entitlements(for: Purchases.account(account), at: Story.at(days))
                let writerHoldings = try await writer.entitlements(for: Purchases.account(account), at: Story.at(days))
                #expect(aheadHoldings == writerHoldings, "\(account) at day \(days)")
            }
        }
        let events = try await Self.eventFacts(ahead)
        // Fewer when shuffled: a state a later fact already settled is not announced again.
        #expect(events.count >= (seed == nil ? 30 : 20))
        let writerEvents = try await Self.eventFacts(writer)
        #expect(events == writerEvents)
        if events != writerEvents {
            for (one, other) in zip(events, writerEvents) where one != other { Issue.record("planned ahead: \(one)\non the writer: \(other)") }
        }
        let rollups = try await Story.allRollups(ahead)
        #expect(!rollups.isEmpty)
        #expect(rollups == (try await Story.allRollups(writer)))
        if seed != nil {
            // Another order of the same facts: the same entitlements and rollups as the story's.
            let reference = try Self.open(.never, catalog: Story.catalog)
            try await Story.tell(story, to: reference)
            for account in ["a0", "a1", "a2"] {
                for days in [0.0, 10, 50, 100, 200] {
                    let shuffled = try await ahead.entitlements(for: Purchases.account(account), at: Story.at(days))
                    #expect(shuffled == (try await reference.entitlements(for: Purchases.account(account), at: Story.at(days))), "\(account) at day \(days)")
                }
            }
            #expect(rollups == (try await Story.allRollups(reference)))
            await reference.close()
        }
        await ahead.close()
        await writer.close()
    }

    @Test("many writers planning ahead on the same families: every plan is taken or made again, and the rollups equal a rebuild")
    func concurrentWritersOnSameFamilies() async throws {
        let ledger = try Self.open(.always, catalog: Story.catalog)
        let facts = LedgerTests.AnalyticsConcurrency.interleaved(families: ["c0", "c1"], accounts: "a")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for fact in facts {
                group.addTask { try await LedgerTests.AnalyticsConcurrency.tell(fact, to: ledger) }
            }
            try await group.waitForAll()
        }
        let counts = ledger.plansAhead.counts
        #expect(counts.taken + counts.replanned >= facts.count)
        #expect(counts.taken > 0)
        let incremental = try await Story.allRollups(ledger)
        try await ledger.rebuildRollups()
        #expect(incremental == (try await Story.allRollups(ledger)))
        #expect(try await ledger.checkIntegrity().problems.isEmpty)
        await ledger.close()
    }

    @Test("an idle writer plans itself; a busy one gets plans made ahead")
    func plansAheadOnlyWhenBusy() async throws {
        let ledger = try Self.open(.whenBusy)
        for index in 0..<5 {
            try await ledger.record(Purchases.proof(Purchases.nonConsumable("alone-\(index)")), for: Purchases.account("a"))
        }
        #expect(ledger.plansAhead.counts == (taken: 0, replanned: 0))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    try await ledger.record(Purchases.proof(Purchases.nonConsumable("busy-\(index)")), for: Purchases.account("b\(index)"))
                }
            }
            try await group.waitForAll()
        }
        #expect(ledger.plansAhead.counts.taken > 0)
        #expect(ledger.plansAhead.counts.replanned == 0)
        await ledger.close()
    }
}

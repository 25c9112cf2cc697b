import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// The SQLite ledger's writer thread commits the writes that queue up together; each write is
/// still all or nothing and sees the ones before it.
@Suite("SQLite writer thread")
struct SQLiteWriterTests {
    static func temporaryPath() throws -> String {
        let directory = try TemporaryFiles.directory("writer")
        return directory.appendingPathComponent("ledger.sqlite").path
    }

    @Test("many concurrent writes, some refused: each refused write leaves nothing, every other one is kept, and replays of one purchase record it once")
    func concurrentWritesWithRefusals() async throws {
        let ledger = try SQLiteLedger(path: try Self.temporaryPath())
        // Families 0..<40 are owned by "owner-i" first (sequentially), then 120 writes race:
        // the owners buying more (kept), other accounts replaying the families (refused), and
        // the same new purchase sent 20 times by one account (recorded once).
        for index in 0..<40 {
            try await ledger.record(Purchases.proof(Purchases.nonConsumable("family-\(index)")), for: Purchases.account("owner-\(index)"))
        }
        let outcomes = await withTaskGroup(of: (String, Result<RecordOutcome, LedgerError>).self) { group in
            for index in 0..<40 {
                group.addTask {
                    let proof = Purchases.proof(Purchases.consumable("coins-\(index)", quantity: 2))
                    do throws(LedgerError) {
                        return ("kept-\(index)", .success(try await ledger.record(proof, for: Purchases.account("owner-\(index)"))))
                    } catch {
                        return ("kept-\(index)", .failure(error))
                    }
                }
                group.addTask {
                    let replay = Purchases.proof(Purchases.nonConsumable("family-\(index)"))
                    do throws(LedgerError) {
                        return ("replay-\(index)", .success(try await ledger.record(replay, for: Purchases.account("thief-\(index)"))))
                    } catch {
                        return ("replay-\(index)", .failure(error))
                    }
                }
            }
            for _ in 0..<20 {
                group.addTask {
                    do throws(LedgerError) {
                        return ("same", .success(try await ledger.record(Purchases.proof(Purchases.nonConsumable("once")), for: Purchases.account("buyer"))))
                    } catch {
                        return ("same", .failure(error))
                    }
                }
            }
            var all: [(String, Result<RecordOutcome, LedgerError>)] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.count == 100)
        for (name, outcome) in outcomes {
            switch (name.hasPrefix("replay"), outcome) {
            case (true, .failure(let error)): #expect(error.code == .ownedByAnotherAccount, "\(name): \(error)")
            case (true, .success): Issue.record("\(name): a replay by another account was recorded")
            case (false, .failure(let error)): Issue.record("\(name): \(error)")
            case (false, .success): break
            }
        }
        let newOnce = outcomes.filter { $0.0 == "same" }.compactMap { try? $0.1.get() }.filter { !$0.newTransactionIds.isEmpty }
        #expect(newOnce.count == 1, "the same purchase was recorded as new \(newOnce.count) times")
        for index in 0..<40 {
            let owned = try await ledger.entitlements(for: Purchases.account("owner-\(index)"), at: Purchases.t0)
            #expect(owned.balance(of: "coins") == 2)
            let thief = try await ledger.entitlements(for: Purchases.account("thief-\(index)"), at: Purchases.t0)
            #expect(thief.ownedNonConsumables.isEmpty)
        }
        #expect(try await ledger.checkIntegrity().problems.isEmpty)
        await ledger.close()
        let closed = await #expect(throws: LedgerError.self) {
            try await ledger.record(Purchases.proof(Purchases.consumable("after-close")), for: Purchases.account("late"))
        }
        #expect(closed?.code == .closed)
    }

    @Test("a write that runs alone (a bulk call) gets a transaction without a job savepoint, while the writes queued around it are still batched")
    func aloneWritesAreNotBatched() async throws {
        let ledger = try SQLiteLedger(path: try Self.temporaryPath())
        /// Whether the write runs under a batched job's savepoint: `ROLLBACK TO job` (which undoes
        /// nothing yet) works there, and fails where there is no such savepoint.
        @Sendable func underJobSavepoint(alone: Bool) async throws -> Bool {
            try await ledger.write(alone: alone) { connection throws(LedgerError) -> Bool in
                do throws(LedgerError) {
                    try connection.run("ROLLBACK TO job")
                    return true
                } catch {
                    return false
                }
            }
        }
        let results = try await withThrowingTaskGroup(of: (Bool, Bool).self) { group in
            // A first write holds the thread long enough for the others to queue behind it.
            group.addTask {
                _ = try await ledger.write { _ throws(LedgerError) in usleep(100_000) }
                return (false, false)
            }
            try await Task.sleep(for: .milliseconds(20))
            for index in 0..<40 {
                let alone = index % 8 == 3
                group.addTask { (alone, try await underJobSavepoint(alone: alone)) }
            }
            var results: [(alone: Bool, underSavepoint: Bool)] = []
            for try await result in group { results.append(result) }
            return results
        }
        #expect(results.filter(\.alone).count == 5)
        #expect(results.filter(\.alone).allSatisfy { !$0.underSavepoint }, "a write that runs alone ran under a job's savepoint")
        #expect(results.contains { !$0.alone && $0.underSavepoint }, "no write was batched: the probe tells nothing")
        await ledger.close()
    }

    @Test("a lone write refused in the middle of sequential writes rolls back alone and leaves no transaction open")
    func loneWriteRefused() async throws {
        let ledger = try SQLiteLedger(path: try Self.temporaryPath())
        try await ledger.record(Purchases.proof(Purchases.nonConsumable("family-a")), for: Purchases.account("alice"))
        let refused = await #expect(throws: LedgerError.self) {
            // The family and a new consumable in one proof: all or nothing.
            try await ledger.record(
                Purchases.proof([Purchases.nonConsumable("family-a"), Purchases.consumable("coins-b", quantity: 3)]),
                for: Purchases.account("bob"))
        }
        #expect(refused?.code == .ownedByAnotherAccount)
        try await ledger.record(Purchases.proof(Purchases.consumable("coins-c", quantity: 2)), for: Purchases.account("bob"))
        let bob = try await ledger.entitlements(for: Purchases.account("bob"), at: Purchases.t0)
        #expect(bob.balance(of: "coins") == 2, "the refused proof's consumable was kept")
        #expect(bob.ownedNonConsumables.isEmpty)
        #expect(try await ledger.checkIntegrity().problems.isEmpty)
        await ledger.close()
    }

    @Test("a group commit queues its jobs' rollup changes as one merged row; a job rolled back takes its own changes back, and a lone write queues its own row")
    func groupCommitQueuesOneRollupRow() async throws {
        let ledger = try SQLiteLedger(path: try Self.temporaryPath())
        @Sendable func rollup(_ product: String, _ count: Int64, day: Int64 = 20_000) -> Rollup {
            Rollup(
                key: RollupKey(
                    day: day, measure: .revenue, environment: .production, productId: product, subscriptionGroup: "",
                    storefront: "USA", currency: "USD", offer: "none"
                ),
                value: RollupValue(count: count, amount: count * 990)
            )
        }
        @Sendable func queuedRows() async throws -> [[Rollup]] {
            try await ledger.write { connection throws(LedgerError) -> [[Rollup]] in
                try SQLiteLedger.queuedRollupChanges(limit: 100, connection).map { change throws(LedgerError) in try RollupChanges.decode(change.deltas) }
            }
        }
        // The writer is held until every job below waits behind it: they are one batch.
        let release = DispatchSemaphore(value: 0)
        let outcomes = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                try await ledger.write { _ throws(LedgerError) in release.wait() }
                return nil
            }
            while ledger.outstandingWrites < 1 { try await Task.sleep(for: .milliseconds(2)) }
            for index in 0..<5 {
                let changes = [rollup("coins", 1), rollup("pass-\(index)", 2)]
                group.addTask {
                    try await ledger.write { connection throws(LedgerError) in try SQLiteLedger.queueRollupChanges(RollupChanges.encode(changes), connection) }
                    return "kept-\(index)"
                }
            }
            let refused = [rollup("coins", 7), rollup("refused", 1)]
            group.addTask {
                do throws(LedgerError) {
                    try await ledger.write { connection throws(LedgerError) in
                        try SQLiteLedger.queueRollupChanges(RollupChanges.encode(refused), connection)
                        throw LedgerError(.insufficientBalance, reason: "refused after its changes were staged")
                    }
                    return "refused was kept"
                } catch {
                    return error.code == .insufficientBalance ? "refused" : "refused with \(error)"
                }
            }
            let deadline = ContinuousClock.now + .seconds(60)
            while ledger.outstandingWrites < 7, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(2)) }
            #expect(ledger.outstandingWrites == 7, "the jobs did not all queue behind the held one")
            release.signal()
            var outcomes: [String] = []
            for try await outcome in group { if let outcome { outcomes.append(outcome) } }
            return outcomes.sorted()
        }
        #expect(outcomes == ["kept-0", "kept-1", "kept-2", "kept-3", "kept-4", "refused"])
        let rows = try await queuedRows()
        #expect(rows.count == 1, "one row for the batch, not one per job")
        // The row holds each kept job's encoding back to back (the fold merges them).
        #expect(rows.first?.count == 10, "each kept job's two changes, and nothing of the refused one")
        let expected = Rollup.merged([rollup("coins", 5)] + (0..<5).map { rollup("pass-\($0)", 2) })
        #expect(rows.first.map(Rollup.merged) == expected, "the refused job's changes were queued, or a kept one's were not")

        // A write alone in its transaction queues its own row, after the batch's.
        try await ledger.write(alone: true) { connection throws(LedgerError) in try SQLiteLedger.queueRollupChanges(RollupChanges.encode([rollup("coins", 1, day: 20_001)]), connection) }
        #expect(try await queuedRows().map(Rollup.merged) == [expected, [rollup("coins", 1, day: 20_001)]])
        await ledger.close()
    }
}

import Foundation
import StoreGateCore
@testable import StoreGateLedger
@testable import StoreGateLedgerPostgres
@testable import StoreGateLedgerSQLite
import Testing

extension LedgerTests {
    /// Migration 15 on a ledger written at schema 14 (no per-day counts): the migration fills
    /// `ledger_activity_days` from the stored events and transactions, and the activity it
    /// reads equals the in-memory ledger's on the same story; writes after it keep the counts.
    @Suite("Schema 15: the per-day activity counts of a ledger at schema 14")
    struct ActivityMigration {
        /// Opens the ledger of `store` at schema `version` (all when `nil`).
        static func open(_ backend: LedgerBackend, _ store: LedgerStore, through version: Int?, _ configuration: LedgerConfiguration) async throws -> any Ledger {
            switch backend.kind {
            case .sqlite:
                var options = SQLiteLedger.Options()
                options.migratingThrough = version
                return try SQLiteLedger(path: store.location, configuration: configuration, options: options)
            case .postgres:
                return try await PostgresLedger.connect(
                    url: store.location, configuration: configuration, maximumConnections: 2, operationTimeout: nil, migratingThrough: version
                )
            case .memory:
                throw LedgerError(.invalidArgument, reason: "the memory backend has no schema")
            }
        }

        @Test("a ledger written at schema 14 gets its counts from its events and transactions", arguments: LedgerBackend.persistent)
        func fillsFromFourteen(backend: LedgerBackend) async throws {
            // No retention while at 14: today's PostgreSQL ledger prunes with schema 15's function.
            let steps = Activity.story(seed: 14, count: 50).filter { step in
                if case .prune = step { return false }
                return true
            }
            let expected = try #require(try await Activity.normal(steps, on: .memory).last)
            let clock = TestClock(Activity.midnight)
            let configuration = LedgerConfiguration(now: { clock.now })
            try await backend.withStore { store in
                // Schema 14 has no queue of rollup changes: writes add theirs, as they did then.
                var atFourteen = configuration
                atFourteen.queuesRollupChanges = false
                atFourteen.addsRollupDays = false
                let old = try await Self.open(backend, store, through: 14, atFourteen)
                do {
                    for step in steps {
                        switch step {
                        case .fact(let fact):
                            await Activity.tell(fact, to: old, clock: clock)
                        case .transfer(_, _, let date):
                            clock.now = date
                            try await Activity.run(step, on: old)
                        case .prune:
                            try await Activity.run(step, on: old)
                        }
                    }
                    // Schema 14 has no per-day counts to read.
                    await expectLedgerError(.storage) { _ = try await old.activity(days: 7, endingAt: Activity.midnight) }
                } catch {
                    await old.close()
                    throw error
                }
                await old.close()

                let ledger = try await store.open(configuration)
                #expect(try await Activity.observe(ledger, steps) == expected)

                // Counted on from here by the triggers: a purchase the day after the story's last window.
                let later = Activity.midnight.addingTimeInterval(400 * Activity.day)
                clock.now = later
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("after-15", at: later)), for: Activity.accounts[0])
                #expect(try await ledger.activity(days: 1, endingAt: later).map(\.purchases) == [1])
            }
        }
    }
}

import CoreMetrics
import StoreGateLedger
import Synchronization

/// Planning a write before it reaches the writer thread.
///
/// Every write of the file runs on one thread (``SQLiteWriter``), so what a write does there
/// bounds how many writes a second the ledger takes, however many cores wait idle. Planning
/// (merging the incoming transactions, deriving the events and the analytics rollups' change)
/// is a pure function of the rows it reads: when the writer is busy, a caller reads those rows
/// on a reader, plans on its own thread while it would otherwise wait, and hands the plan to
/// the writer with the rows it came from. The writer loads the rows again, as it always does,
/// and takes the plan only when they are equal; otherwise (another write changed the family
/// in between) it plans again from what it loaded. A plan made ahead therefore never decides
/// anything the writer's own plan would not have.
///
/// When the writer is idle the caller's job runs at once, and planning there costs the caller
/// no more time: nothing is read ahead then.
///
/// Measured with `storegate-dev bench write-costs` (16 writers, release, 2 cores): see
/// docs/benchmarks.md, "What a write pays for".
extension SQLiteLedger {
    /// A plan made ahead, with the rows it was made from.
    struct PlannedWrite<Outcome: Sendable>: Sendable {
        let state: PlanningState
        let plan: LedgerWritePlan
        let outcome: Outcome
    }

    /// How often the writer took a plan made ahead, and how often it planned again: counted
    /// in `storegate_ledger_plans_ahead_total{backend="sqlite",outcome="taken"|"replanned"}`.
    final class PlanAheadCounts: Sendable {
        private let taken = Atomic<Int>(0)
        private let replanned = Atomic<Int>(0)
        private let takenCounter = Counter(label: "storegate_ledger_plans_ahead_total", dimensions: [("backend", "sqlite"), ("outcome", "taken")])
        private let replannedCounter = Counter(label: "storegate_ledger_plans_ahead_total", dimensions: [("backend", "sqlite"), ("outcome", "replanned")])

        func count(taken wasTaken: Bool) {
            if wasTaken {
                taken.add(1, ordering: .relaxed)
                takenCounter.increment()
            } else {
                replanned.add(1, ordering: .relaxed)
                replannedCounter.increment()
            }
        }

        /// The counts so far (tests).
        var counts: (taken: Int, replanned: Int) { (taken.load(ordering: .relaxed), replanned.load(ordering: .relaxed)) }
    }

    /// Reads the rows a write needs on a reader and plans it, when the writer is busy
    /// (``Options/planningAhead``); `nil` when it is idle, or when reading or planning failed
    /// (the writer then plans, and meets the same error itself if there is one).
    func planAhead<Outcome: Sendable>(
        families: [FamilyKey], transactions: [TransactionKey],
        _ plan: @escaping @Sendable (PlanningState) throws(LedgerError) -> (LedgerWritePlan, Outcome)
    ) async -> PlannedWrite<Outcome>? {
        guard planningAheadNow else { return nil }
        let planned = try? await perform { () throws(LedgerError) -> PlannedWrite<Outcome> in
            let state = try self.read(snapshot: true) { connection throws(LedgerError) in
                try Self.loadState(connection, families: families, transactions: transactions)
            }
            let (plan, outcome) = try plan(state)
            return PlannedWrite(state: state, plan: plan, outcome: outcome)
        }
        return planned
    }

    /// The plan for `state`, the rows the writer just loaded: the one made ahead when it was
    /// made from the same rows, otherwise `plan(state)`.
    static func plan<Outcome: Sendable>(
        _ ahead: PlannedWrite<Outcome>?, state: PlanningState, counts: PlanAheadCounts?,
        otherwise plan: (PlanningState) throws(LedgerError) -> (LedgerWritePlan, Outcome)
    ) throws(LedgerError) -> (LedgerWritePlan, Outcome) {
        guard let ahead else { return try plan(state) }
        let taken = ahead.state == state
        counts?.count(taken: taken)
        return taken ? (ahead.plan, ahead.outcome) : try plan(state)
    }
}

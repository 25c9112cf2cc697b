import Foundation
public import StoreGateLedger

extension SQLiteLedger: BulkRecording {
    /// A few thousand facts per write transaction: large enough that the commit's cost
    /// vanishes, small enough that another writer waits tens of milliseconds, not seconds.
    public var recommendedBatch: Int { 2000 }

    /// Records `facts` in order in one write job of the writer thread: each fact runs the
    /// normal path's write (``record(_:planner:at:_:)``, ``apply(_:planner:at:_:)``) inside its
    /// own savepoint, exactly as the writer runs the jobs of a group commit, so a fact that
    /// fails rolls back alone and the transaction is the facts' calls run one after another.
    /// The timeline index catches up between jobs, as it does after any write.
    public func recordInBulk(_ facts: [LedgerFact]) async throws(LedgerError) -> [LedgerFactOutcome] {
        let prepared = planner.prepare(facts)
        let planner = self.planner
        // Alone in its transaction: each fact's savepoint is then the outermost, and releasing
        // it empties SQLite's sub-journal instead of walking the whole call's (SQLiteWriter).
        return try await write(alone: true) { connection throws(LedgerError) -> [LedgerFactOutcome] in
            var outcomes: [LedgerFactOutcome] = []
            outcomes.reserveCapacity(prepared.count)
            for fact in prepared {
                if case .failed(let error) = fact {
                    outcomes.append(.failed(error))
                    continue
                }
                try connection.run("SAVEPOINT fact")
                do throws(LedgerError) {
                    switch fact {
                    case .proof(let proof, let date):
                        switch try Self.record(proof, planner: planner, at: date, connection) {
                        case .success(let outcome): outcomes.append(.recorded(outcome))
                        case .failure(let refusal): outcomes.append(.failed(refusal))  // its event is kept
                        }
                    case .notification(let notification, let date):
                        outcomes.append(.applied(try Self.apply(notification, planner: planner, at: date, connection)))
                    case .failed: break
                    }
                } catch {
                    // SQLite rolled the whole transaction back (a full disk, an I/O error):
                    // nothing of the call is kept, and the writer answers with a storage error.
                    guard connection.isInTransaction else { throw error }
                    try connection.run("ROLLBACK TO fact")
                    outcomes.append(.failed(error))
                }
                try connection.run("RELEASE fact")
            }
            // The call's rollup changes are folded before it commits (with any queued before):
            // a bulk build leaves no queue behind, and each key is written once per call.
            while try Self.foldRollupChanges(limit: RollupChanges.foldBatch, connection) == RollupChanges.foldBatch {}
            return outcomes
        }
    }
}

extension SQLiteLedger {
    /// The bytes the ledger takes on disk: the database file and its write-ahead log (what
    /// `storegate-dev bench scale` divides by the transactions).
    package func databaseBytes() -> Int {
        [path, path + "-wal", path + "-shm"].reduce(0) { total, file in
            // A missing log or index file (after a checkpoint truncated it) counts zero.
            let attributes = try? FileManager.default.attributesOfItem(atPath: file)
            return total + (attributes?[.size] as? Int ?? 0)
        }
    }
}

import PostgresNIO
public import StoreGateLedger

extension PostgresLedger: BulkRecording {
    /// A few hundred facts per transaction: the commit's cost vanishes, and the per-account
    /// advisory locks the facts take stay far below the server's lock table (64 per
    /// connection by default).
    public var recommendedBatch: Int { 250 }

    /// Records `facts` in order in one `BEGIN … COMMIT` on one pooled connection: each fact
    /// runs the normal path's two round trips (``record(_:planner:at:_:logger:)``,
    /// ``apply(_:planner:at:_:logger:)``: the load function, the shared planner, the apply
    /// function), so the rows, events and rollups are the normal path's; the events of the
    /// call are numbered in the order the facts appended them (one transaction id, insertion
    /// order). A fact the planner refuses writes nothing (a refusal, its event) and the others
    /// go on; a database error rolls the whole call back and retries it, as every write is
    /// retried, or fails it.
    public func recordInBulk(_ facts: [LedgerFact]) async throws(LedgerError) -> [LedgerFactOutcome] {
        let prepared = planner.prepare(facts)
        let planner = self.planner
        let logger = self.logger
        return try await transaction { connection -> [LedgerFactOutcome] in
            var outcomes: [LedgerFactOutcome] = []
            outcomes.reserveCapacity(prepared.count)
            for fact in prepared {
                do {
                    switch fact {
                    case .proof(let proof, let date):
                        switch try await Self.record(proof, planner: planner, at: date, connection, logger: logger) {
                        case .success(let outcome): outcomes.append(.recorded(outcome))
                        case .failure(let refusal): outcomes.append(.failed(refusal))  // its event is kept
                        }
                    case .notification(let notification, let date):
                        outcomes.append(.applied(try await Self.apply(notification, planner: planner, at: date, connection, logger: logger)))
                    case .failed(let error):
                        outcomes.append(.failed(error))
                    }
                } catch let error as LedgerError where Self.isPlannerRefusal(error) {
                    // Thrown by the planner, before the fact wrote anything.
                    outcomes.append(.failed(error))
                }
            }
            return outcomes
        }
    }

    /// Whether `error` is the planner's answer about one fact (nothing written), not the
    /// database's (which ends the transaction).
    static func isPlannerRefusal(_ error: LedgerError) -> Bool {
        switch error.code {
        case .storage, .corruptState, .closed, .migration, .schemaTooNew: false
        default: true
        }
    }
}

extension PostgresLedger {
    /// Brings the planner's statistics and the visibility map up to date after a bulk build or
    /// an import: `VACUUM (ANALYZE)` of every table of the database, outside any transaction.
    ///
    /// Right after hundreds of thousands of rows arrive, the planner still holds the
    /// statistics of a much smaller table, so it picks plans made for it (a page of events
    /// read by a scan, not its index), and no page is marked all-visible, so an index-only
    /// scan still reads the table. Autovacuum fixes both, on its own schedule (it analyzes a
    /// table after a tenth of its rows changed, and can still be busy while the first requests
    /// arrive); this does it now. `storegate-dev bench scale` calls it after each build.
    public func vacuumAndAnalyze() async throws(LedgerError) {
        let logger = self.logger
        try await withConnection(bounded: false) { connection in
            _ = try await connection.query("VACUUM (ANALYZE)", logger: logger)
        }
    }

    /// Disables the triggers that keep the console overview's per-day counts: only
    /// `storegate-dev bench write-costs` does, on a database of its own, to measure what they
    /// cost a write. The counts are wrong from then on.
    package func disableActivityTriggersForBenchmark() async throws(LedgerError) {
        let logger = self.logger
        try await withConnection(bounded: false) { connection in
            // Both tables' triggers are the activity counts' alone (schema 15).
            _ = try await connection.query("ALTER TABLE ledger_events DISABLE TRIGGER USER", logger: logger)
            _ = try await connection.query("ALTER TABLE ledger_transactions DISABLE TRIGGER USER", logger: logger)
        }
    }

    /// The bytes the database takes on disk (`pg_database_size`: tables, indexes, TOAST; not
    /// the server's WAL): what `storegate-dev bench scale` divides by the transactions.
    package func databaseBytes() async throws(LedgerError) -> Int {
        let logger = self.logger
        return try await withConnection { connection in
            let rows = try await Self.rows(connection, "SELECT pg_database_size(current_database())::BIGINT", [], logger: logger)
            return try rows.first?.int(0) ?? 0
        }
    }
}

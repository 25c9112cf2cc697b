/// A ledger that records many facts in one write transaction: the bulk path, for imports and
/// for building large ledgers (`storegate-dev bench scale`).
///
/// ``recordInBulk(_:)`` writes exactly what calling ``Ledger/record(_:for:)`` and
/// ``Ledger/apply(_:)`` for each fact, in order, with the ledger's clock at each fact's
/// ``LedgerFact/receivedAt``, would have written: every backend runs its normal path's code
/// (the shared planner's `prepare` and `plan`, the backend's own load and apply) for each
/// fact, only inside one transaction instead of one per call. The rows, the events and their
/// order in the stream, the timelines and the analytics rollups are the same; a contract test
/// (`BulkRecordingTests`) records one story both ways on every backend and compares them.
///
/// What differs:
/// - Atomicity: a storage error fails the whole call, and nothing of it is kept (the normal
///   path would have kept the facts before the failing one). A refused or invalid fact fails
///   alone (``LedgerFactOutcome/failed(_:)``), as its own call would, and the others go on.
/// - Metrics: the bulk path does not count its facts as recorded requests.
/// - PostgreSQL takes a transaction-scoped advisory lock per account a fact appends events
///   for, so one call should span at most a few hundred accounts (the lock table holds
///   `max_locks_per_transaction × max_connections` locks); SQLite takes one write
///   transaction, so one call of a few thousand facts keeps other writers waiting that long.
///   Callers chunk their facts (``recommendedBatch``).
public protocol BulkRecording: Sendable {
    /// The facts one call should carry for this backend.
    var recommendedBatch: Int { get }

    /// Records `facts` in order, in one write transaction.
    ///
    /// - Returns: One outcome per fact, in order.
    /// - Throws: A storage error (nothing of the call is kept), or ``LedgerError/Code/closed``.
    func recordInBulk(_ facts: [LedgerFact]) async throws(LedgerError) -> [LedgerFactOutcome]
}

extension InMemoryLedger: BulkRecording {
    /// The memory backend has no transaction to amortize: any batch does.
    public nonisolated var recommendedBatch: Int { 1000 }

    /// Records `facts` in order, each through the code of ``record(_:for:)`` or ``apply(_:)``
    /// (the actor runs the whole call at once, as one transaction).
    public func recordInBulk(_ facts: [LedgerFact]) async throws(LedgerError) -> [LedgerFactOutcome] {
        try checkOpen()
        return planner.prepare(facts).map { prepared in
            do throws(LedgerError) {
                switch prepared {
                case .proof(let proof, _): return .recorded(try record(proof))
                case .notification(let notification, _): return .applied(try apply(notification))
                case .failed(let error): return .failed(error)
                }
            } catch {
                return .failed(error)
            }
        }
    }
}

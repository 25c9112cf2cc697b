/// `storegate bench ledger`. (Owned by the ledger work, issue #5.)
enum LedgerBenchmark {
    static func run(iterations: Int) async throws {
        throw CLIError("the ledger benchmark is not built yet")
    }
}

/// `storegate bench receipt`.
enum ReceiptBenchmark {
    static func run(iterations: Int) async throws {
        throw CLIError("the receipt benchmark is not built yet")
    }
}

/// `storegate bench jws`. (Owned by the SignedData work, issue #3.)
enum SignedDataBenchmark {
    static func run(iterations: Int) async throws {
        throw CLIError("the jws benchmark is not built yet")
    }
}

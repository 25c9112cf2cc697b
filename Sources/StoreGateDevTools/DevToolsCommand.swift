import ArgumentParser

/// `storegate-dev`: tools for developing and measuring StoreGate, built on its test CA.
///
/// Kept out of the shipped `storegate` binary, which links no test support: nothing here is
/// needed to verify or record a real purchase.
@main
struct DevToolsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storegate-dev",
        abstract: "StoreGate's development tools: demo data, minted receipts, Apple's stand-in, benchmarks.",
        subcommands: [
            DevDemoCommand.self,
            DevMintReceiptsCommand.self,
            AppStoreStandInCommand.self,
            BenchCommand.self,
            LedgerStressCommand.self,
        ]
    )
}

/// A failure reported as one line on standard error, with a non-zero exit.
struct CLIError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

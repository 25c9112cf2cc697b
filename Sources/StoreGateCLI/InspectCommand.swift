import ArgumentParser
import StoreGateCore

/// `storegate inspect FILE|-`: decode any proof to JSON, without deciding whether it is genuine.
struct InspectCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "inspect",
        abstract: "Decode an app receipt (DER or base64) or a StoreKit 2 JWS and print it as JSON."
    )

    @Argument(help: "The proof: a file path, or - for standard input.")
    var file: String

    func run() async throws {
        do {
            switch try ProofInput.read(path: file) {
            case .receipt(let der):
                print(try ReceiptCLI.inspect(der: der))
            case .jws(let compact):
                print(try SignedDataCLI.inspect(compact: compact))
            }
        } catch {
            Output.error("\(error)")
            throw ExitCode(2)
        }
    }
}

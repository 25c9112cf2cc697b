import ArgumentParser

/// `storegate serve`: run the HTTP service. (Owned by the server work, issue #6.)
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "serve", abstract: "Run the StoreGate HTTP service.")

    func run() async throws {
        throw CLIError("serve is not built yet")
    }
}

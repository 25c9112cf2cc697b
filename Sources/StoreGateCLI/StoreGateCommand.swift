import ArgumentParser

@main
struct StoreGateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "storegate")
}

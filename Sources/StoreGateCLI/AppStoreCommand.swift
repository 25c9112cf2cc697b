import ArgumentParser

/// `storegate appstore …`: call the App Store Server API. (Owned by the client work, issue #4.)
struct AppStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "appstore", abstract: "Call the App Store Server API.")
}

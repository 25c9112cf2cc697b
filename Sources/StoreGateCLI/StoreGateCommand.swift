import ArgumentParser

/// `storegate`: verify App Store proofs of purchase, inspect them, serve the HTTP API.
@main
struct StoreGateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "storegate",
        abstract: "Decide whether an Apple In-App Purchase is real, and remember what each customer owns.",
        subcommands: [
            InspectCommand.self,
            VerifyCommand.self,
            ServeCommand.self,
            AppStoreCommand.self,
            WebhookCommand.self,
            SyncCommand.self,
            AnalyticsCommand.self,
            OffersCommand.self,
            GrantCommand.self,
            KeysCommand.self,
            TransferCommand.self,
            MigrateCommand.self,
        ]
    )
}

import ArgumentParser
import Foundation
import StoreGateAppStoreClient

/// `storegate sync`: the App Store sync of a running StoreGate service.
struct SyncCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sync",
        abstract: "Ask a running StoreGate service to refresh an account from Apple, or show where its sync stands.",
        discussion: """
            The API key comes from STOREGATE_API_KEY (never a flag, which other users of the machine \
            could read): `accounts.refresh` for `account`, `sync.read` for `status`. Prints the service's \
            JSON reply; exit 0 when it succeeded, 1 when the service refused or failed.
            """,
        subcommands: [Account.self, Status.self]
    )

    struct Options: ParsableArguments {
        @Option(name: .customLong("url"), help: "The service's base URL.")
        var url: String = "http://127.0.0.1:8080"

        @Option(name: .customLong("timeout"), help: "Seconds to wait for the reply.")
        var timeout: Int = 120
    }

    /// `storegate sync account ACCOUNT`: `POST /v1/accounts/{account}/refresh`.
    struct Account: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Refresh one account from Apple's transaction history and subscription statuses."
        )

        @OptionGroup var options: Options

        @Argument(help: "The account id.")
        var account: String

        func run() async throws {
            try await SyncCommand.call(options, method: "POST", path: "/v1/accounts/" + SyncCommand.percentEncoded(account) + "/refresh")
        }
    }

    /// `storegate sync status`: `GET /v1/sync/status`.
    struct Status: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show the sync's cursor and counters per app and environment.")

        @OptionGroup var options: Options

        func run() async throws {
            try await SyncCommand.call(options, method: "GET", path: "/v1/sync/status")
        }
    }

    static func percentEncoded(_ value: String) -> String {
        ServiceClient.percentEncoded(value)
    }

    static func call(_ options: Options, method: String, path: String) async throws {
        try await ServiceClient(url: options.url, timeout: options.timeout).call(method: method, path: path)
    }
}

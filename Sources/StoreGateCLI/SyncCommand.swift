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
        value.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? value
    }

    static func call(_ options: Options, method: String, path: String) async throws {
        guard let key = ProcessInfo.processInfo.environment["STOREGATE_API_KEY"], !key.isEmpty else {
            throw CLIError("set STOREGATE_API_KEY to an API key of the service")
        }
        let base = options.url.hasSuffix("/") ? String(options.url.dropLast()) : options.url
        let transport = AsyncHTTPClientTransport(
            configuration: .init(connectTimeout: .seconds(10), readTimeout: .seconds(max(1, options.timeout))), logger: Output.logger
        )
        let outcome: Result<TransportResponse, AppStoreClientError>
        do {
            outcome = .success(try await transport.send(
                TransportRequest(method: method, url: base + path, headers: [.init("Authorization", "Bearer " + key), .init("Accept", "application/json")]),
                deadline: .now + .seconds(max(1, options.timeout))
            ))
        } catch {
            outcome = .failure(error)
        }
        try? await transport.shutdown()
        switch outcome {
        case .success(let response):
            print(String(decoding: response.body, as: UTF8.self))
            guard (200..<300).contains(response.status) else {
                Output.error("the service answered \(response.status)")
                throw ExitCode(1)
            }
        case .failure(let error):
            Output.error("cannot reach \(base): \(error.reason)")
            throw ExitCode(1)
        }
    }
}

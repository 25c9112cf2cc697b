import ArgumentParser
import Foundation

/// `storegate keys`: API keys managed live, through a running StoreGate service.
///
/// It talks to the service (`/v1/keys`, with the shared ``ServiceClient``) rather than to the
/// ledger: the service checks the caller's `keys.manage` permission and that it only gives
/// permissions it holds, records who created each key, forgets a revoked key at once on the
/// instance that revoked it, and logs every change — and the CLI needs no database credentials.
struct KeysCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "keys",
        abstract: "Create, list or revoke API keys (through a running service).",
        discussion: """
            The API key comes from STOREGATE_API_KEY and needs the `keys.manage` permission (and \
            every permission it gives). A created key is printed once, in the reply's `secret`: \
            only its SHA-256 is stored. Exit 0 when it succeeded, 1 when the service refused or failed.

              storegate keys create billing --permission entitlements.read --permission events.read --expires 2027-01-01T00:00:00Z
              storegate keys create batch --permission receipts.verify --rate-limit 600/60
              storegate keys list
              storegate keys revoke billing
            """,
        subcommands: [Create.self, List.self, Revoke.self]
    )

    /// `storegate keys create NAME`: `POST /v1/keys`.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a key; its secret is printed once.")

        @OptionGroup var options: GrantCommand.Options

        @Argument(help: "The key's name (1...64 of A-Z a-z 0-9 . _ -).")
        var name: String

        @Option(name: .customLong("permission"), help: "A permission it may use (repeat the option; * for all the caller holds).")
        var permissions: [String] = []

        @Option(name: .customLong("expires"), help: "When it stops working: an RFC 3339 time.")
        var expires: String?

        @Option(name: .customLong("rate-limit"), help: "Its own rate limit, requests/seconds (100/1, 6000/60).")
        var rateLimit: String?

        func validate() throws {
            guard !permissions.isEmpty else { throw ValidationError("give at least one --permission") }
            if let rateLimit {
                let parts = rateLimit.split(separator: "/")
                guard parts.count == 2, Int(parts[0]) != nil, Int(parts[1]) != nil else {
                    throw ValidationError("--rate-limit is requests/seconds, such as 100/1")
                }
            }
        }

        func run() async throws {
            var body: [String: Any] = ["name": name, "permissions": permissions]
            if let expires { body["expiresAt"] = expires }
            if let rateLimit {
                let parts = rateLimit.split(separator: "/").compactMap { Int($0) }
                body["rateLimit"] = ["requests": parts[0], "seconds": parts[1]]
            }
            try await options.client.call(method: "POST", path: "/v1/keys", body: body)
        }
    }

    /// `storegate keys list`: `GET /v1/keys`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List every key by name, with its state and last use (never a secret).")

        @OptionGroup var options: GrantCommand.Options

        func run() async throws {
            try await options.client.call(method: "GET", path: "/v1/keys")
        }
    }

    /// `storegate keys revoke NAME`: `POST /v1/keys/{name}/revoke`.
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a key now, on every instance within a second.")

        @OptionGroup var options: GrantCommand.Options

        @Argument(help: "The key's name.")
        var name: String

        func run() async throws {
            try await options.client.call(method: "POST", path: "/v1/keys/" + ServiceClient.percentEncoded(name) + "/revoke")
        }
    }
}

import ArgumentParser
import Foundation

/// `storegate grant`: entitlements given by hand, through a running StoreGate service.
struct GrantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "grant",
        abstract: "Grant an entitlement by hand, list an account's grants, or revoke one (through a running service).",
        discussion: """
            The API key comes from STOREGATE_API_KEY and needs the `grants.manage` permission; the \
            key's name is recorded as who granted or revoked. Prints the service's JSON reply; exit 0 \
            when it succeeded, 1 when the service refused or failed.

              storegate grant create alice pro --duration P7D --reason "ticket 4711"
              storegate grant list alice
              storegate grant revoke alice 6f1c…-… --reason "resolved"
            """,
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Options: ParsableArguments {
        @Option(name: .customLong("url"), help: "The service's base URL.")
        var url: String = "http://127.0.0.1:8080"

        @Option(name: .customLong("timeout"), help: "Seconds to wait for the reply.")
        var timeout: Int = 30

        var client: ServiceClient { ServiceClient(url: url, timeout: timeout) }
    }

    /// `storegate grant create ACCOUNT ENTITLEMENT`: `POST /v1/accounts/{account}/grants`.
    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Grant an entitlement for a duration or until a date.")

        @OptionGroup var options: Options

        @Argument(help: "The account id.")
        var account: String

        @Argument(help: "The catalog's entitlement identifier.")
        var entitlement: String

        @Option(name: .customLong("duration"), help: "How long: an ISO 8601 duration such as P7D, P2W or PT12H.")
        var duration: String?

        @Option(name: .customLong("until"), help: "Until when: an RFC 3339 time such as 2026-12-31T23:59:59Z.")
        var until: String?

        @Option(name: .customLong("reason"), help: "Why (kept in the audit trail).")
        var reason: String

        @Option(name: .customLong("idempotency-key"), help: "Makes a retry harmless (default: a new UUID).")
        var idempotencyKey: String?

        func validate() throws {
            guard (duration == nil) != (until == nil) else { throw ValidationError("give --duration or --until") }
        }

        func run() async throws {
            var body: [String: Any] = ["entitlement": entitlement, "reason": reason, "idempotencyKey": idempotencyKey ?? UUID().uuidString.lowercased()]
            if let duration { body["duration"] = duration }
            if let until { body["until"] = until }
            try await options.client.call(method: "POST", path: "/v1/accounts/" + ServiceClient.percentEncoded(account) + "/grants", body: body)
        }
    }

    /// `storegate grant list ACCOUNT`: `GET /v1/accounts/{account}/grants`.
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an account's grants, newest first.")

        @OptionGroup var options: Options

        @Argument(help: "The account id.")
        var account: String

        func run() async throws {
            try await options.client.call(method: "GET", path: "/v1/accounts/" + ServiceClient.percentEncoded(account) + "/grants")
        }
    }

    /// `storegate grant revoke ACCOUNT GRANT`: `POST /v1/accounts/{account}/grants/{grant}/revoke`.
    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a grant now.")

        @OptionGroup var options: Options

        @Argument(help: "The account id.")
        var account: String

        @Argument(help: "The grant's id.")
        var grant: String

        @Option(name: .customLong("reason"), help: "Why (kept in the audit trail).")
        var reason: String

        func run() async throws {
            let path = "/v1/accounts/" + ServiceClient.percentEncoded(account) + "/grants/" + ServiceClient.percentEncoded(grant) + "/revoke"
            try await options.client.call(method: "POST", path: path, body: ["reason": reason])
        }
    }
}

import ArgumentParser
import Foundation

/// `storegate transfer`: support moves a purchase family to an account, through a running
/// StoreGate service (`POST /v1/accounts/{account}/transfers`).
struct TransferCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "transfer",
        abstract: "Move a purchase to an account by hand, from whichever account owns it (through a running service).",
        discussion: """
            Every transaction of the purchase family (its renewals, its consumable units) moves to \
            ACCOUNT, whatever STOREGATE_TRANSFER_POLICY says. The API key comes from \
            STOREGATE_API_KEY and needs the `transfers.manage` permission; the key's name and the \
            reason are recorded in both accounts' purchase.transferred events. A purchase bound to \
            another account's appAccountToken never moves (409 app_account_token_mismatch). Prints \
            the service's JSON reply (`isMoved` false when ACCOUNT owned it already); exit 0 when it \
            succeeded, 1 when the service refused or failed.

              storegate transfer new-account 2000000123456789 --environment Production --reason "ticket 4711"
            """
    )

    @Option(name: .customLong("url"), help: "The service's base URL.")
    var url: String = "http://127.0.0.1:8080"

    @Option(name: .customLong("timeout"), help: "Seconds to wait for the reply.")
    var timeout: Int = 30

    @Argument(help: "The account the purchase moves to.")
    var account: String

    @Argument(help: "The purchase family's original transaction id.")
    var originalTransactionId: String

    @Option(name: .customLong("environment"), help: "Production, Sandbox, Xcode, LocalTesting or Test.")
    var environment: String = "Production"

    @Option(name: .customLong("reason"), help: "Why (kept in the audit trail).")
    var reason: String

    func run() async throws {
        let body: [String: Any] = ["environment": environment, "originalTransactionId": originalTransactionId, "reason": reason]
        try await ServiceClient(url: url, timeout: timeout).call(
            method: "POST", path: "/v1/accounts/" + ServiceClient.percentEncoded(account) + "/transfers", body: body
        )
    }
}

import ArgumentParser
import Foundation
import StoreGateEvents

/// `storegate webhook`: tools for the receiving end of StoreGate's webhooks.
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook",
        abstract: "Tools for receiving StoreGate's webhooks.",
        subcommands: [Verify.self]
    )

    /// `storegate webhook verify`: checks one delivery's signature by hand.
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a webhook delivery's StoreGate-Signature against its raw body.",
            discussion: """
                The secret comes from STOREGATE_WEBHOOK_SECRET (never a flag, which other users of \
                the machine could read). Exit 0 when the signature verifies, 1 when it does not.
                """
        )

        @Option(name: .customLong("signature"), help: "The StoreGate-Signature header's value (t=…,v1=…).")
        var signature: String

        @Option(name: .customLong("body"), help: "File holding the raw request body, byte for byte ('-' for standard input).")
        var body: String

        @Option(name: .customLong("tolerance"), help: "Largest accepted age of the signature, in seconds (default 300; 0 checks the MAC only).")
        var tolerance: Int = 300

        func run() async throws {
            guard let secret = ProcessInfo.processInfo.environment["STOREGATE_WEBHOOK_SECRET"], !secret.isEmpty else {
                throw CLIError("set STOREGATE_WEBHOOK_SECRET to the endpoint's secret")
            }
            let bytes: [UInt8]
            if body == "-" {
                bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
            } else {
                guard let data = FileManager.default.contents(atPath: body) else { throw CLIError("cannot read \(body)") }
                bytes = Array(data)
            }
            do throws(WebhookSignature.Failure) {
                // Tolerance 0: check the MAC whatever the age (a delivery saved earlier).
                let signed = try WebhookSignature.verify(
                    header: signature, body: bytes, secret: secret,
                    tolerance: tolerance == 0 ? .seconds(Int64.max / 2) : .seconds(tolerance)
                )
                print("valid: signed at \(ISO8601DateFormatter().string(from: signed)) over \(bytes.count) bytes")
            } catch {
                print("invalid: \(error)")
                throw ExitCode(1)
            }
        }
    }
}

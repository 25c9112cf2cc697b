import ArgumentParser
import Foundation
import StoreGateEvents

/// `storegate webhook`: tools for the receiving end of StoreGate's webhooks, and for the
/// endpoints of a running service.
struct WebhookCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "webhook",
        abstract: "Tools for receiving StoreGate's webhooks, and for a service's webhook endpoints.",
        discussion: "Signatures, secrets, rotation and 410 Gone: docs/webhooks-signatures.md.",
        subcommands: [Verify.self, Secret.self, Endpoints.self, Enable.self]
    )

    /// The secret from STOREGATE_WEBHOOK_SECRET (never a flag, which other users of the machine could read).
    static func secretFromEnvironment() throws -> WebhookSecret {
        guard let text = ProcessInfo.processInfo.environment["STOREGATE_WEBHOOK_SECRET"], !text.isEmpty else {
            throw CLIError("set STOREGATE_WEBHOOK_SECRET to the endpoint's secret")
        }
        do throws(WebhookConfigurationError) {
            return try WebhookSecret(text)
        } catch {
            throw CLIError("STOREGATE_WEBHOOK_SECRET: \(error.description)")
        }
    }

    /// `storegate webhook verify`: checks one delivery's signature by hand.
    struct Verify: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a webhook delivery's StoreGate-Signature, or its Standard Webhooks signature, against its raw body.",
            discussion: """
                The secret comes from STOREGATE_WEBHOOK_SECRET (never a flag, which other users of \
                the machine could read): the endpoint's secret as configured. With --webhook-id and \
                --webhook-timestamp, --signature is the webhook-signature header (Standard Webhooks); \
                without them, the StoreGate-Signature header. Exit 0 when the signature verifies, 1 \
                when it does not.
                """
        )

        @Option(name: .customLong("signature"), help: "The StoreGate-Signature header's value (t=…,v1=…), or webhook-signature's (v1,… v1,…).")
        var signature: String

        @Option(name: .customLong("webhook-id"), help: "The webhook-id header (Standard Webhooks).")
        var webhookId: String?

        @Option(name: .customLong("webhook-timestamp"), help: "The webhook-timestamp header (Standard Webhooks).")
        var webhookTimestamp: String?

        @Option(name: .customLong("body"), help: "File holding the raw request body, byte for byte ('-' for standard input).")
        var body: String

        @Option(name: .customLong("tolerance"), help: "Largest accepted age of the signature, in seconds (default 300; 0 checks the MAC only).")
        var tolerance: Int = 300

        func validate() throws {
            guard (webhookId == nil) == (webhookTimestamp == nil) else {
                throw ValidationError("--webhook-id and --webhook-timestamp go together (Standard Webhooks)")
            }
        }

        func run() async throws {
            let secret = try WebhookCommand.secretFromEnvironment()
            let bytes: [UInt8]
            if body == "-" {
                bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
            } else {
                guard let data = FileManager.default.contents(atPath: body) else { throw CLIError("cannot read \(body)") }
                bytes = Array(data)
            }
            // Tolerance 0: check the MAC whatever the age (a delivery saved earlier).
            let window: Duration = tolerance == 0 ? .seconds(Int64.max / 2) : .seconds(tolerance)
            let signed: Date
            if let webhookId, let webhookTimestamp {
                do throws(StandardWebhookSignature.Failure) {
                    signed = try StandardWebhookSignature.verify(
                        id: webhookId, timestamp: webhookTimestamp, signature: signature, body: bytes, secret: secret, tolerance: window
                    )
                } catch {
                    print("invalid: \(error)")
                    throw ExitCode(1)
                }
            } else {
                do throws(WebhookSignature.Failure) {
                    signed = try WebhookSignature.verify(header: signature, body: bytes, secret: secret.text, tolerance: window)
                } catch {
                    print("invalid: \(error)")
                    throw ExitCode(1)
                }
            }
            print("valid: signed at \(ISO8601DateFormatter().string(from: signed)) over \(bytes.count) bytes")
        }
    }

    /// `storegate webhook secret`: a new secret, or the form a Standard Webhooks receiver needs.
    struct Secret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print a new endpoint secret (whsec_ + base64 of 32 random bytes), or the Standard Webhooks form of one.",
            discussion: """
                Without flags, prints a new random secret in the Standard Webhooks form: put it in the \
                endpoint's `secrets` and give the same text to receivers, whichever library they use. \
                With --receiver-form, prints what a Standard Webhooks library must be given for the \
                secret in STOREGATE_WEBHOOK_SECRET: the text itself for a whsec_ secret, whsec_ + \
                base64 of its bytes for a plain one (Stripe's SDK always takes the text as configured).
                """
        )

        @Flag(name: .customLong("receiver-form"), help: "Print the Standard Webhooks form of STOREGATE_WEBHOOK_SECRET instead of a new secret.")
        var receiverForm = false

        func run() async throws {
            if receiverForm {
                print(try WebhookCommand.secretFromEnvironment().standardWebhooksSecret)
            } else {
                print(WebhookSecret.generate())
            }
        }
    }

    /// `storegate webhook endpoints`: `GET /v1/webhooks/endpoints`.
    struct Endpoints: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show a running service's webhook endpoints, each enabled or disabled (after a receiver's 410 Gone).",
            discussion: "The API key comes from STOREGATE_API_KEY (permission webhooks.manage). Prints the service's JSON reply."
        )

        @OptionGroup var options: SyncCommand.Options

        func run() async throws {
            try await SyncCommand.call(options, method: "GET", path: "/v1/webhooks/endpoints")
        }
    }

    /// `storegate webhook enable ENDPOINT`: `POST /v1/webhooks/endpoints/{endpoint}/enable`.
    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Enable a webhook endpoint of a running service again after its receiver answered 410 Gone.",
            discussion: """
                Its pending deliveries resume, each account's in order, on every instance within a few \
                seconds. The API key comes from STOREGATE_API_KEY (permission webhooks.manage). Exit 0 \
                when it is enabled, 1 when the service refused or failed.
                """
        )

        @OptionGroup var options: SyncCommand.Options

        @Argument(help: "The endpoint's name, as in STOREGATE_WEBHOOKS_FILE.")
        var endpoint: String

        func run() async throws {
            try await SyncCommand.call(options, method: "POST", path: "/v1/webhooks/endpoints/" + SyncCommand.percentEncoded(endpoint) + "/enable")
        }
    }
}

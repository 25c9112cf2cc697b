import ArgumentParser
import Foundation
import StoreGateCore
import StoreGateReceipt

/// `storegate verify FILE`: verify a proof offline and print each check.
struct VerifyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Verify an app receipt or a StoreKit 2 JWS offline; exit 0 only when it is valid.",
        discussion: """
            Certificates are checked at the time the proof was signed (receipt creation date, JWS \
            signedDate) unless --at says otherwise. Exit status: 0 valid, 1 invalid, 2 unusable input.
            """
    )

    @Argument(help: "The proof: a file path, or - for standard input.")
    var file: String

    @Option(name: .customLong("bundle-id"), help: "The bundle id the proof must be for.")
    var bundleId: String

    @Option(name: .customLong("app-version"), help: "The app version (CFBundleVersion) the receipt must name.")
    var appVersion: String?

    @Option(name: .customLong("device-id"), help: "The device identifier as hex: 16 bytes (iOS identifierForVendor) or 6 (macOS MAC).")
    var deviceId: String?

    @Option(name: .customLong("product-id"), help: "A product the proof must contain.")
    var productId: String?

    @Option(name: .customLong("transaction-id"), help: "A transaction the proof must contain.")
    var transactionId: String?

    @Option(name: .customLong("environment"), parsing: .upToNextOption, help: "Accepted environments: production, sandbox, xcode, localtesting, test (default: production sandbox).")
    var environments: [String] = []

    @Option(name: .customLong("trust-dir"), help: "A directory of extra root certificates; certificates not pinned as Apple roots become opt-in anchors.")
    var trustDirectory: String?

    @Option(name: .customLong("at"), help: "Check certificates at this time (ISO 8601, or 'now') instead of the signing time.")
    var at: String?

    @Option(name: .customLong("app-apple-id"), help: "JWS: the app's App Store identifier (appAppleId); required for data claiming Production that names one (notifications, app transactions).")
    var appAppleId: Int64?

    @Option(name: .customLong("max-age"), help: "JWS: refuse a signedDate older than this many seconds.")
    var maxAge: Double?

    @Option(name: .customLong("kind"), help: "JWS: transaction, renewal-info, app-transaction or notification (default: detected from the payload).")
    var jwsKind: String?

    @Flag(name: .customLong("json"), help: "Print the report as JSON.")
    var json = false

    @Flag(name: .customLong("remote"), help: "App receipts: also ask Apple's verifyReceipt (shared secret from STOREGATE_SHARED_SECRET, never a flag) and print both verdicts; valid only when both are valid and agree.")
    var remote = false

    @Option(name: .customLong("apple-endpoint"), help: "With --remote: a stand-in for Apple (production at URL/production/verifyReceipt, sandbox at URL/sandbox/verifyReceipt).")
    var appleEndpoint: String?

    func run() async throws {
        let options: VerifyOptions
        let input: ProofInput
        do {
            options = try VerifyOptions(self)
            input = try ProofInput.read(path: file)
        } catch {
            Output.error("\(error)")
            throw ExitCode(2)
        }
        if remote, case .jws = input {
            Output.error("--remote checks app receipts with verifyReceipt; a JWS is verified offline only")
            throw ExitCode(2)
        }
        var valid: Bool
        switch input {
        case .receipt(let der):
            let report = await ReceiptCLI.report(der: der, options: options)
            var verdict = ReceiptCLI.VerdictJSON(report)
            var text = ReceiptCLI.render(report)
            valid = report.isValid
            if remote {
                let answer = await RemoteVerifyCLI.verify(der: der, options: options, offlineValid: report.isValid, appleEndpoint: appleEndpoint)
                verdict.remote = answer.json
                verdict.overall_valid = answer.overall
                text += "\n" + answer.text
                valid = answer.overall
            }
            print(options.json ? try Output.json(verdict) : text)
        case .jws(let compact):
            valid = try await SignedDataCLI.verify(compact: compact, options: options)
        }
        if !valid { throw ExitCode(1) }
    }
}

/// The parsed `verify` options shared by every proof kind.
struct VerifyOptions {
    var bundleId: String
    var appVersion: String?
    var deviceId: [UInt8]?
    var productId: String?
    var transactionId: String?
    var environments: Set<AppStoreEnvironment>
    var trustStore: TrustStore
    /// `nil`: the proof's signing time.
    var validationTime: Date?
    var json: Bool
    /// JWS: the expected `appAppleId`, the maximum age of `signedDate`, the payload kind.
    var appAppleId: Int64?
    var maxAge: TimeInterval?
    var jwsKind: String?

    init(_ command: VerifyCommand) throws {
        bundleId = command.bundleId
        appVersion = command.appVersion
        productId = command.productId
        transactionId = command.transactionId
        json = command.json
        appAppleId = command.appAppleId
        maxAge = command.maxAge
        jwsKind = command.jwsKind
        if let hex = command.deviceId {
            guard let bytes = Hex.decode(hex.filter { $0 != "-" && $0 != ":" }), bytes.count == 16 || bytes.count == 6 else {
                throw CLIError("--device-id must be 16 bytes (a UUID) or 6 bytes (a MAC address) in hex")
            }
            deviceId = bytes
        }
        if command.environments.isEmpty {
            environments = AppStoreEnvironment.defaultAccepted
        } else {
            var set = Set<AppStoreEnvironment>()
            for name in command.environments {
                guard let environment = AppStoreEnvironment(name: name) else {
                    throw CLIError("--environment: unknown environment '\(name)'")
                }
                set.insert(environment)
            }
            environments = set
        }
        if let directory = command.trustDirectory {
            do {
                trustStore = try TrustStore.load(directory: directory)
            } catch {
                throw CLIError("--trust-dir: \(error.reason)")
            }
        } else {
            trustStore = TrustStore()
        }
        if let at = command.at {
            if at == "now" {
                validationTime = Date()
            } else if let date = ISO8601DateFormatter().date(from: at) {
                validationTime = date
            } else {
                throw CLIError("--at: '\(at)' is not an ISO 8601 time such as 2024-01-31T12:00:00Z")
            }
        }
    }
}

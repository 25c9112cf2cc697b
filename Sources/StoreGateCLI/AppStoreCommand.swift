import ArgumentParser
import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateSignedData
import StoreGateSync

/// `storegate appstore …`: call the App Store Server API and print what it answers, every
/// signed payload verified first.
struct AppStoreCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "appstore",
        abstract: "Call the App Store Server API; every signed payload is verified before it is printed.",
        discussion: """
            Credentials come from the environment, never from flags:
              STOREGATE_APPSTORE_KEY_ID       the In-App Purchase key id (JWT kid)
              STOREGATE_APPSTORE_ISSUER_ID    the App Store Connect issuer id
              STOREGATE_APPSTORE_PRIVATE_KEY  the .p8 key as PEM text, or
              STOREGATE_APPSTORE_PRIVATE_KEY_FILE  the path of the .p8 file
              STOREGATE_BUNDLE_ID             the app's bundle id
              STOREGATE_APP_APPLE_ID          the app's App Store id (or --app-apple-id)
            Where Apple is (default: Apple's recommended domains, api.storekit.apple.com and
            api.storekit-sandbox.apple.com): --api-url, else STOREGATE_APPSTORE_API_URL_PRODUCTION or
            STOREGATE_APPSTORE_API_URL_SANDBOX (the environment's base URL), else a stand-in's base in
            --apple-endpoint or STOREGATE_APPSTORE_API_URL (URL/production, URL/sandbox).
            Exit status: 0 answered, 1 Apple refused or a payload failed verification, 2 unusable input.
            """,
        subcommands: [
            History.self,
            Statuses.self,
            Lookup.self,
            Refunds.self,
            TransactionInfo.self,
            TestNotification.self,
            AppTransactionInfo.self,
            SetAppAccountToken.self,
            FinishTransaction.self,
            ExtendRenewalDate.self,
            ExtendAllRenewalDates.self,
            ExtensionStatus.self,
        ]
    )

    /// Options every `appstore` subcommand takes.
    struct Options: ParsableArguments {
        @Option(name: .customLong("environment"), help: "production or sandbox.")
        var environment: String = "production"

        @Option(name: .customLong("apple-endpoint"), help: "A stand-in for Apple (such as StoreGate's test stand-in): production at URL/production, sandbox at URL/sandbox.")
        var appleEndpoint: String?

        @Option(name: .customLong("api-url"), help: "The base URL of --environment's App Store Server API, used as given (such as https://api.storekit.itunes.apple.com).")
        var apiURL: String?

        @Option(name: .customLong("trust-dir"), help: "A directory of extra root certificates; certificates not pinned as Apple roots become opt-in anchors (payloads they sign report the Test or Xcode environment).")
        var trustDirectory: String?

        @Option(name: .customLong("timeout"), help: "Seconds the whole call may take, retries included.")
        var timeout: Int = 45

        @Option(name: .customLong("app-apple-id"), help: "The app's App Store identifier (appAppleId; default: STOREGATE_APP_APPLE_ID). Production payloads that name an app must name this one; production app transactions and notifications are refused without it.")
        var appAppleId: Int64?
    }

    /// `appstore history TRANSACTION_ID`: Get Transaction History, every page.
    struct History: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Get Transaction History (v2), following every page.")
        @Argument(help: "Any transaction id of the customer.") var transactionId: String
        @Option(name: .customLong("max-pages"), help: "Stop after this many pages.") var maxPages: Int = 100
        @OptionGroup var options: Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                let transactions = try await client.allTransactionHistory(transactionId: transactionId, maxPages: maxPages)
                return try Output.json(AppStoreCLI.TransactionList(transactions: transactions))
            }
        }
    }

    /// `appstore statuses TRANSACTION_ID`: Get All Subscription Statuses.
    struct Statuses: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Get All Subscription Statuses.")
        @Argument(help: "Any transaction id of the subscription.") var transactionId: String
        @OptionGroup var options: Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                try Output.json(try await client.allSubscriptionStatuses(transactionId: transactionId))
            }
        }
    }

    /// `appstore lookup ORDER_ID`: Look Up Order ID.
    struct Lookup: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Look Up Order ID (the order id on the customer's Apple receipt e-mail).")
        @Argument(help: "The order id.") var orderId: String
        @OptionGroup var options: Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                try Output.json(try await client.lookUpOrder(orderId: orderId))
            }
        }
    }

    /// `appstore refunds TRANSACTION_ID`: Get Refund History, every page.
    struct Refunds: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Get Refund History (v2), following every page.")
        @Argument(help: "Any transaction id of the customer.") var transactionId: String
        @Option(name: .customLong("max-pages"), help: "Stop after this many pages.") var maxPages: Int = 100
        @OptionGroup var options: Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                let transactions = try await client.allRefundHistory(transactionId: transactionId, maxPages: maxPages)
                return try Output.json(AppStoreCLI.TransactionList(transactions: transactions))
            }
        }
    }

    /// `appstore transaction TRANSACTION_ID`: Get Transaction Info.
    struct TransactionInfo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "transaction", abstract: "Get Transaction Info.")
        @Argument(help: "The transaction id.") var transactionId: String
        @OptionGroup var options: Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                try Output.json(try await client.transactionInfo(transactionId: transactionId))
            }
        }
    }
}

extension AppStoreCommand {
    /// `appstore test-notification`: Request a Test Notification, then Get Test Notification
    /// Status until Apple reports delivering it, printing each hop.
    struct TestNotification: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "test-notification",
            abstract: "Ask Apple for a test notification and wait until it reaches your notification URL, printing each hop.",
            discussion: """
                Apple reports SUCCESS only when your server answered 200; StoreGate's webhook answers 200 only \
                once the notification is stored. Exit 0 when a delivery succeeded, 1 otherwise.
                """
        )

        @OptionGroup var options: AppStoreCommand.Options

        @Option(name: .customLong("wait"), help: "Seconds to wait for Apple's delivery.")
        var wait: Int = 60

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                let result = await TestNotificationCheck(client: client, ledger: nil, timeout: .seconds(max(1, wait)), pollInterval: .seconds(1))
                    .run { hop in print(hop.description) }
                guard result.passed else { throw CLIError("the test notification did not reach the notification URL") }
                return "DELIVERED: Apple's test notification reached the notification URL"
            }
        }
    }
}

/// The plumbing of `storegate appstore`: credentials from the environment, the client, errors.
enum AppStoreCLI {
    struct TransactionList: Encodable {
        let transactions: [VerifiedTransaction]
    }

    /// Builds a client from the environment and options, runs `body`, prints what it returns.
    static func call(_ options: AppStoreCommand.Options, _ body: (AppStoreServerAPIClient) async throws -> String) async throws {
        let transport = AsyncHTTPClientTransport(logger: Output.logger)
        let outcome: Result<String, any Error>
        do {
            let client = try makeClient(options, transport: transport)
            outcome = .success(try await body(client))
        } catch {
            outcome = .failure(error)
        }
        try? await transport.shutdown()
        switch outcome {
        case .success(let text):
            print(text)
        case .failure(let error as CLIError):
            Output.error(error.description)
            throw ExitCode(2)
        case .failure(let error as AppStoreClientError) where error.code == .invalidConfiguration || error.code == .invalidRequest:
            Output.error(error.description)
            throw ExitCode(2)
        case .failure(let error):
            Output.error("\(error)")
            throw ExitCode(1)
        }
    }

    /// Where Apple is, the first that is given: `--api-url` (the environment's base URL),
    /// `--apple-endpoint` (a stand-in's base), `STOREGATE_APPSTORE_API_URL_PRODUCTION` /
    /// `_SANDBOX`, `STOREGATE_APPSTORE_API_URL` (a stand-in's base); Apple's domains otherwise.
    static func endpoints(
        _ options: AppStoreCommand.Options, environment: AppStoreEnvironment, variables: [String: String]
    ) throws -> AppStoreServerAPIEndpoints {
        let variable = environment == .production ? "STOREGATE_APPSTORE_API_URL_PRODUCTION" : "STOREGATE_APPSTORE_API_URL_SANDBOX"
        let candidates: [(source: String, url: String?, standIn: Bool)] = [
            ("--api-url", options.apiURL, false),
            ("--apple-endpoint", options.appleEndpoint, true),
            (variable, variables[variable].flatMap { $0.isEmpty ? nil : $0 }, false),
            ("STOREGATE_APPSTORE_API_URL", variables["STOREGATE_APPSTORE_API_URL"].flatMap { $0.isEmpty ? nil : $0 }, true),
        ]
        guard let chosen = candidates.first(where: { $0.url != nil }), let url = chosen.url else { return .apple }
        if let problem = AppStoreServerAPIEndpoints.problem(withBaseURL: url) {
            throw CLIError("\(chosen.source): \(problem)")
        }
        return chosen.standIn ? AppStoreServerAPIEndpoints(standIn: url) : AppStoreServerAPIEndpoints.apple.replacing(environment, with: url)
    }

    static func makeClient(_ options: AppStoreCommand.Options, transport: any HTTPTransport) throws -> AppStoreServerAPIClient {
        let environment: AppStoreEnvironment
        switch options.environment.lowercased() {
        case "production": environment = .production
        case "sandbox": environment = .sandbox
        default: throw CLIError("--environment must be production or sandbox")
        }
        let variables = ProcessInfo.processInfo.environment
        func required(_ name: String) throws -> String {
            guard let value = variables[name], !value.isEmpty else {
                throw CLIError("\(name) is not set (see `storegate appstore --help`)")
            }
            return value
        }
        let pem: String
        if let inline = variables["STOREGATE_APPSTORE_PRIVATE_KEY"], !inline.isEmpty {
            pem = inline
        } else if let path = variables["STOREGATE_APPSTORE_PRIVATE_KEY_FILE"], !path.isEmpty {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CLIError("STOREGATE_APPSTORE_PRIVATE_KEY_FILE: \(path) cannot be read")
            }
            pem = String(decoding: data, as: UTF8.self)
        } else {
            throw CLIError("set STOREGATE_APPSTORE_PRIVATE_KEY or STOREGATE_APPSTORE_PRIVATE_KEY_FILE (the .p8 key)")
        }
        let credentials = try AppStoreServerAPICredentials(
            keyId: try required("STOREGATE_APPSTORE_KEY_ID"),
            issuerId: try required("STOREGATE_APPSTORE_ISSUER_ID"),
            bundleId: try required("STOREGATE_BUNDLE_ID"),
            privateKeyPEM: pem
        )
        var trustStore = TrustStore()
        var environments: Set<AppStoreEnvironment> = [environment]
        if let directory = options.trustDirectory {
            do {
                trustStore = try TrustStore.load(directory: directory)
            } catch {
                throw CLIError("--trust-dir: \(error.reason)")
            }
            if !trustStore.optInAnchors.isEmpty {
                environments.formUnion([.test, .xcode])
            }
        }
        var appAppleId = options.appAppleId
        if appAppleId == nil, let text = variables["STOREGATE_APP_APPLE_ID"], !text.isEmpty {
            guard let number = Int64(text), number > 0 else {
                throw CLIError("STOREGATE_APP_APPLE_ID: '\(text)' is not an App Store app id (a positive whole number)")
            }
            appAppleId = number
        }
        let verifier = SignedDataVerifier(
            expectations: SignedDataExpectations(bundleId: credentials.bundleId, environments: environments, appAppleId: appAppleId),
            chainVerifier: CertificateChainVerifier(trustStore: trustStore)
        )
        var policy = RetryPolicy.default
        policy.totalDeadline = .seconds(max(1, options.timeout))
        return try AppStoreServerAPIClient(
            tokens: AppStoreServerAPITokenProvider(credentials: credentials),
            environment: environment,
            endpoints: try endpoints(options, environment: environment, variables: variables),
            transport: transport,
            verifier: SignedDataPayloadVerifier(verifier),
            retryPolicy: policy,
            logger: Output.logger
        )
    }
}

import ArgumentParser
import Foundation
import StoreGateAppStoreClient
import StoreGateCore

extension AppStoreCommand {
    /// `appstore app-transaction ID`: Get App Transaction Info, verified before printing.
    struct AppTransactionInfo: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "app-transaction",
            abstract: "Get App Transaction Info: the customer's app transaction, verified."
        )
        @Argument(help: "Any transactionId, originalTransactionId or appTransactionId of the customer.") var transactionId: String
        @OptionGroup var options: AppStoreCommand.Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                try Output.json(try await client.appTransactionInfo(transactionId: transactionId))
            }
        }
    }

    /// `appstore set-app-account-token ORIGINAL_ID UUID`: Set App Account Token.
    struct SetAppAccountToken: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "set-app-account-token",
            abstract: "Set App Account Token: name the account (a UUID) on a purchase, such as one made outside the app."
        )
        @Argument(help: "The purchase's original transaction id.") var originalTransactionId: String
        @Argument(help: "The app account token (a UUID).") var appAccountToken: String
        @OptionGroup var options: AppStoreCommand.Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                guard let token = UUID(uuidString: appAccountToken) else {
                    throw CLIError("'\(appAccountToken)' is not a UUID")
                }
                try await client.setAppAccountToken(originalTransactionId: originalTransactionId, appAccountToken: token)
                return try Output.json(["originalTransactionId": originalTransactionId, "appAccountToken": token.uuidString.lowercased()])
            }
        }
    }

    /// `appstore finish-transaction ID`: Finish Transaction.
    struct FinishTransaction: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "finish-transaction",
            abstract: "Finish Transaction: tell Apple the purchase was delivered (as Transaction.finish() does in the app)."
        )
        @Argument(help: "The transaction id.") var transactionId: String
        @OptionGroup var options: AppStoreCommand.Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                try await client.finishTransaction(transactionId: transactionId)
                return try Output.json(AppStoreCLI.Finished(transactionId: transactionId, finished: true))
            }
        }
    }

    /// Options both extension commands take.
    struct ExtensionOptions: ParsableArguments {
        @Option(name: .customLong("days"), help: "Days to extend by, 1-90.") var days: Int
        @Option(name: .customLong("reason"), help: "undeclared, customer-satisfaction, other or service-issue-or-outage.") var reason: String
        @Option(name: .customLong("request-id"), help: "Your identifier of the request, 1-128 characters (default: a new UUID, printed); the same one again is not applied twice.")
        var requestId: String?

        func parts() throws -> (days: Int, reason: ExtendReasonCode, requestId: String) {
            guard let code = ExtendReasonCode.named.first(where: { $0.name == reason.lowercased() })?.code else {
                throw CLIError("--reason must be \(ExtendReasonCode.named.map(\.name).joined(separator: ", "))")
            }
            return (days, code, requestId ?? UUID().uuidString.lowercased())
        }
    }

    /// `appstore extend ORIGINAL_ID --days N --reason R`: Extend a Subscription Renewal Date.
    struct ExtendRenewalDate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "extend",
            abstract: "Extend a Subscription Renewal Date for one customer (exit 1 when Apple answers success: false)."
        )
        @Argument(help: "The subscription's original transaction id.") var originalTransactionId: String
        @OptionGroup var extensionOptions: AppStoreCommand.ExtensionOptions
        @OptionGroup var options: AppStoreCommand.Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                let parts = try extensionOptions.parts()
                let request = ExtendRenewalDateRequest(extendByDays: parts.days, extendReasonCode: parts.reason, requestIdentifier: parts.requestId)
                let answer = try await client.extendSubscriptionRenewalDate(originalTransactionId: originalTransactionId, request)
                let text = try Output.json(AppStoreCLI.Extension(requestIdentifier: parts.requestId, response: answer))
                guard answer.success else {
                    print(text)
                    throw AppStoreCLI.Refused("Apple did not extend the subscription (success: false)")
                }
                return text
            }
        }
    }

    /// `appstore extend-all --product P --days N --reason R`: Extend Subscription Renewal Dates
    /// for All Active Subscribers.
    struct ExtendAllRenewalDates: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "extend-all",
            abstract: "Extend Subscription Renewal Dates for All Active Subscribers of one product; follow it with extension-status."
        )
        @Option(name: .customLong("product"), help: "The auto-renewable subscription's product id.") var productId: String
        @Option(name: .customLong("storefront"), help: "Only this storefront (ISO 3166-1 alpha-3 such as USA); repeat for several.") var storefronts: [String] = []
        @OptionGroup var extensionOptions: AppStoreCommand.ExtensionOptions
        @OptionGroup var options: AppStoreCommand.Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                let parts = try extensionOptions.parts()
                let request = MassExtendRenewalDateRequest(
                    extendByDays: parts.days, extendReasonCode: parts.reason, requestIdentifier: parts.requestId, productId: productId,
                    storefrontCountryCodes: storefronts
                )
                let identifier = try await client.extendRenewalDateForAllActiveSubscribers(request)
                return try Output.json(["requestIdentifier": identifier, "productId": productId])
            }
        }
    }

    /// `appstore extension-status REQUEST_ID --product P`: Get Status of Subscription Renewal
    /// Date Extensions.
    struct ExtensionStatus: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "extension-status",
            abstract: "Get Status of Subscription Renewal Date Extensions (a mass extension's progress)."
        )
        @Argument(help: "The request identifier extend-all used.") var requestIdentifier: String
        @Option(name: .customLong("product"), help: "The product id extend-all named.") var productId: String
        @OptionGroup var options: AppStoreCommand.Options

        func run() async throws {
            try await AppStoreCLI.call(options) { client in
                try Output.json(try await client.renewalDateExtensionStatus(requestIdentifier: requestIdentifier, productId: productId))
            }
        }
    }
}

extension AppStoreCLI {
    /// What `appstore extend` prints: Apple's answer and the request identifier used.
    struct Extension: Encodable {
        let requestIdentifier: String
        let response: ExtendRenewalDateResponse
    }

    /// Apple answered, and the answer is a refusal (exit 1).
    struct Refused: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// What `appstore finish-transaction` prints.
    struct Finished: Encodable {
        let transactionId: String
        let finished: Bool
    }
}

import ArgumentParser
import Foundation
import StoreGateCore
import StoreGateOffers

/// `storegate offers sign …`: sign subscription offers with the subscription-offer key, as
/// Apple's App Store Server Library does.
struct OffersCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "offers",
        abstract: "Sign subscription offers (StoreKit 1 promotional offers, StoreKit 2 JWS signatures).",
        subcommands: [Sign.self]
    )

    struct Sign: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Sign one offer; prints {\"kind\", \"signature\"} as JSON.",
            discussion: """
                The key comes from --key-file/--key-id, or from the environment, never from a flag's value:
                  STOREGATE_OFFER_KEY_ID with STOREGATE_OFFER_PRIVATE_KEY (PEM text) or STOREGATE_OFFER_PRIVATE_KEY_FILE;
                  without them the App Store Server API key (STOREGATE_APPSTORE_KEY_ID with
                  STOREGATE_APPSTORE_PRIVATE_KEY or STOREGATE_APPSTORE_PRIVATE_KEY_FILE).
                  STOREGATE_APPSTORE_ISSUER_ID (or --issuer-id): the issuer id the StoreKit 2 signatures need.
                  STOREGATE_BUNDLE_ID (or --bundle-id): the app.
                Exit status: 0 signed, 2 unusable input or key.
                """,
            subcommands: [PromotionalV1.self, PromotionalV2.self, Introductory.self, AdvancedCommerce.self]
        )
    }

    /// Options every `offers sign` subcommand takes.
    struct KeyOptions: ParsableArguments {
        @Option(name: .customLong("key-file"), help: "The subscription-offer key's .p8 file (default: from the environment).") var keyFile: String?
        @Option(name: .customLong("key-id"), help: "The key's id (with --key-file).") var keyId: String?
        @Option(name: .customLong("issuer-id"), help: "The team's issuer id (default: STOREGATE_APPSTORE_ISSUER_ID).") var issuerId: String?
        @Option(name: .customLong("bundle-id"), help: "The app's bundle id (default: STOREGATE_BUNDLE_ID).") var bundleId: String?

        func signer() throws -> OfferSigner {
            var environment = ProcessInfo.processInfo.environment
            if let issuerId { environment[OfferSigningKey.Variable.issuerId.rawValue] = issuerId }
            let issuer = environment[OfferSigningKey.Variable.issuerId.rawValue].flatMap { $0.isEmpty ? nil : $0 }
            let key: OfferSigningKey
            if let keyFile {
                guard let keyId else { throw CLIError("--key-file needs --key-id") }
                key = try OfferSigningKey(keyId: keyId, issuerId: issuer, privateKeyFile: keyFile)
            } else if let fromEnvironment = try OfferSigningKey.fromEnvironment(environment) {
                key = fromEnvironment
            } else {
                throw CLIError("no offer key: pass --key-file and --key-id, or set STOREGATE_OFFER_KEY_ID and STOREGATE_OFFER_PRIVATE_KEY_FILE")
            }
            guard let bundle = bundleId ?? environment["STOREGATE_BUNDLE_ID"], !bundle.isEmpty else {
                throw CLIError("--bundle-id or STOREGATE_BUNDLE_ID names the app")
            }
            return try OfferSigner(key: key, bundleId: bundle)
        }
    }

    /// Runs `body` with a signer, printing its signature, or one line and exit 2.
    static func sign(_ options: KeyOptions, _ body: (OfferSigner) throws -> OfferSignature) throws {
        do {
            print(try Output.json(try body(try options.signer())))
        } catch let error as CLIError {
            Output.error(error.description)
            throw ExitCode(2)
        } catch let error as OfferSigningError {
            Output.error(error.description)
            throw ExitCode(2)
        }
    }

    /// `offers sign promotional-v1`.
    struct PromotionalV1: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "promotional-v1",
            abstract: "A StoreKit 1 promotional offer signature (SKPaymentDiscount)."
        )
        @Option(name: .customLong("product"), help: "The subscription's product id.") var productId: String
        @Option(name: .customLong("offer"), help: "The promotional offer's identifier.") var offerIdentifier: String
        @Option(name: .customLong("application-username"), help: "SKMutablePayment.applicationUsername (usually the app account token); default none.")
        var applicationUsername: String = ""
        @Option(name: .customLong("nonce"), help: "The nonce, a UUID (default: a fresh one).") var nonce: String?
        @Option(name: .customLong("timestamp"), help: "UNIX milliseconds (default: now).") var timestamp: Int64?
        @OptionGroup var key: OffersCommand.KeyOptions

        func run() throws {
            try OffersCommand.sign(key) { signer in
                var parsedNonce: UUID?
                if let nonce {
                    guard let value = UUID(uuidString: nonce) else { throw CLIError("--nonce '\(nonce)' is not a UUID") }
                    parsedNonce = value
                }
                return .promotionalOfferV1(try signer.promotionalOfferV1(
                    productId: productId, offerIdentifier: offerIdentifier, applicationUsername: applicationUsername, nonce: parsedNonce, timestamp: timestamp
                ))
            }
        }
    }

    /// `offers sign promotional-v2`.
    struct PromotionalV2: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "promotional-v2",
            abstract: "A StoreKit 2 promotional offer signature (JWS)."
        )
        @Option(name: .customLong("product"), help: "The subscription's product id.") var productId: String
        @Option(name: .customLong("offer"), help: "The promotional offer's identifier.") var offerIdentifier: String
        @Option(name: .customLong("transaction-id"), help: "Any transaction id of the customer (optional; Apple recommends it).") var transactionId: String?
        @OptionGroup var key: OffersCommand.KeyOptions

        func run() throws {
            try OffersCommand.sign(key) { signer in
                .jws(kind: .promotionalOfferV2, compact: try signer.promotionalOfferV2(productId: productId, offerIdentifier: offerIdentifier, transactionId: transactionId))
            }
        }
    }

    /// `offers sign introductory`.
    struct Introductory: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "introductory",
            abstract: "A StoreKit 2 introductory offer eligibility signature (JWS)."
        )
        @Option(name: .customLong("product"), help: "The subscription's product id.") var productId: String
        @Option(name: .customLong("transaction-id"), help: "Any transaction id of the customer (their appTransactionId works).") var transactionId: String
        @Option(name: .customLong("allow"), help: "true or false: whether the customer may have the introductory offer.") var allow: String

        @OptionGroup var key: OffersCommand.KeyOptions

        func run() throws {
            try OffersCommand.sign(key) { signer in
                let allowed: Bool
                switch allow.lowercased() {
                case "true": allowed = true
                case "false": allowed = false
                default: throw CLIError("--allow must be true or false")
                }
                return .jws(
                    kind: .introductoryOfferEligibility,
                    compact: try signer.introductoryOfferEligibility(productId: productId, allowIntroductoryOffer: allowed, transactionId: transactionId)
                )
            }
        }
    }

    /// `offers sign advanced-commerce`.
    struct AdvancedCommerce: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "advanced-commerce",
            abstract: "An Advanced Commerce API in-app request signature (JWS) over a request's JSON."
        )
        @Option(name: .customLong("request-file"), help: "The request as a JSON object ('-': standard input), signed byte for byte.") var requestFile: String
        @OptionGroup var key: OffersCommand.KeyOptions

        func run() throws {
            try OffersCommand.sign(key) { signer in
                let bytes: [UInt8]
                if requestFile == "-" {
                    bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
                } else {
                    guard let data = FileManager.default.contents(atPath: requestFile) else { throw CLIError("--request-file: \(requestFile) cannot be read") }
                    bytes = Array(data)
                }
                return .jws(kind: .advancedCommerceInAppRequest, compact: try signer.advancedCommerceInAppRequest(bytes))
            }
        }
    }
}

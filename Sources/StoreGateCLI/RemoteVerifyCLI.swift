import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateReceipt

/// `storegate verify --remote`: the receipt also goes to Apple's verifyReceipt; the reply is
/// checked against the purchase and compared with the offline verdict.
///
/// The shared secret comes only from `STOREGATE_SHARED_SECRET`, never from a flag that would
/// land in shell history. The receipt is valid only when the offline verdict is valid, Apple's
/// reply is accepted, and the two describe the same receipt.
enum RemoteVerifyCLI {
    /// The `remote` member of `verify --remote --json`.
    struct RemoteJSON: Encodable {
        struct Hop: Encodable {
            let environment: String
            let status: Int
        }

        struct Failure: Encodable {
            let code: String
            let reason: String
            let status: Int?
        }

        struct Agreement: Encodable {
            let agrees: Bool
            let differences: [String]
        }

        let kind = "verify_receipt_reply"
        let valid: Bool
        let environment: String?
        let outcome: String?
        let route: [Hop]
        let error: Failure?
        let agreement: Agreement?
    }

    /// Apple's answer, checked and compared with the offline verdict.
    struct Answer {
        let json: RemoteJSON
        let text: String
        /// Valid offline and remotely, and both describe the same receipt.
        let overall: Bool
    }

    static func verify(der: [UInt8], options: VerifyOptions, offlineValid: Bool, appleEndpoint: String?) async -> Answer {
        let facts = await offlineFacts(der: der, options: options)
        let variables = ProcessInfo.processInfo.environment
        let secret = variables["STOREGATE_SHARED_SECRET"].flatMap { $0.isEmpty ? nil : SharedSecret($0) }
        let request = VerifyReceiptRequest(receipt: der, sharedSecret: secret)

        let expectation: VerifyReceiptExpectation
        if let transactionId = options.transactionId {
            let fromReceipt = facts?.purchases.first { $0.transactionId == transactionId }
            guard let productId = options.productId ?? fromReceipt?.productId else {
                let reason = "--remote --transaction-id needs --product-id when the receipt does not name the transaction"
                return Answer(
                    json: RemoteJSON(valid: false, environment: nil, outcome: nil, route: [], error: .init(code: "invalid_request", reason: reason, status: nil), agreement: nil),
                    text: "REMOTE INVALID: \(reason)\nINVALID (offline and remote verdicts combined)", overall: false)
            }
            let purchase = VerifyReceiptExpectation.Purchase(transactionId: transactionId, productId: productId, quantity: fromReceipt?.quantity ?? 1)
            expectation = VerifyReceiptExpectation(bundleId: options.bundleId, purchase: purchase, environments: options.environments)
        } else {
            expectation = .wholeReceipt(bundleId: options.bundleId, environments: options.environments)
        }

        let transport = AsyncHTTPClientTransport(logger: Output.logger)
        let client = VerifyReceiptClient(
            transport: transport, endpoints: appleEndpoint.map(VerifyReceiptEndpoints.init(standIn:)) ?? .apple, logger: Output.logger
        )
        var exchange: VerifyReceiptClient.Exchange?
        var accepted: AcceptedVerifyReceiptReply?
        var failure: AppStoreClientError?
        do {
            let answer = try await client.send(request)
            exchange = answer
            accepted = try VerifyReceiptReplyVerifier.check(answer, expecting: expectation)
        } catch {
            failure = error
        }
        do {
            try await transport.shutdown()
        } catch {
            // Nothing more to send; a failed shutdown changes no verdict.
        }

        var agreement: ReceiptAgreement?
        if let accepted, let facts {
            agreement = ReceiptAgreement(offline: facts, remote: accepted)
        }
        let overall = offlineValid && accepted != nil && (agreement?.agrees ?? false)

        let json = RemoteJSON(
            valid: accepted != nil,
            environment: accepted?.environment.rawValue,
            outcome: accepted?.outcome.rawValue,
            route: (exchange?.route ?? []).map { .init(environment: $0.environment.rawValue, status: $0.status.rawValue) },
            error: failure.map { .init(code: $0.code.description, reason: $0.reason, status: $0.status?.rawValue) },
            agreement: agreement.map { .init(agrees: $0.agrees, differences: $0.differences.map(\.description)) }
        )
        let text = render(exchange: exchange, accepted: accepted, failure: failure, agreement: agreement, hasFacts: facts != nil, overall: overall)
        return Answer(json: json, text: text, overall: overall)
    }

    /// What the offline verification established, when signature and chain held.
    static func offlineFacts(der: [UInt8], options: VerifyOptions) async -> OfflineReceiptFacts? {
        let verifier = ReceiptVerifier(chainVerifier: CertificateChainVerifier(trustStore: options.trustStore))
        let expectations = ReceiptExpectations(bundleId: options.bundleId, environments: options.environments)
        let time: ReceiptVerifier.ValidationTime = options.validationTime.map { .fixed($0) } ?? .signingTime
        let report = await verifier.report(der, expecting: expectations, at: time)
        guard report.signer != nil, let receipt = report.receipt, let environment = report.environment else { return nil }
        return OfflineReceiptFacts(
            bundleId: receipt.bundleId,
            environment: environment,
            purchases: receipt.inAppPurchases.map { .init(transactionId: $0.transactionId, productId: $0.productId, quantity: $0.quantity) }
        )
    }

    static func render(
        exchange: VerifyReceiptClient.Exchange?,
        accepted: AcceptedVerifyReceiptReply?,
        failure: AppStoreClientError?,
        agreement: ReceiptAgreement?,
        hasFacts: Bool,
        overall: Bool
    ) -> String {
        var lines: [String] = []
        if let exchange {
            let route = exchange.route.map { "\($0.environment.rawValue.lowercased()) → \($0.status.rawValue)" }.joined(separator: ", ")
            lines.append("REMOTE  verifyReceipt  \(route)")
        }
        if let accepted {
            let what = accepted.outcome == .valid ? "status 0" : "status 21006 (subscription expired)"
            lines.append("REMOTE VALID: \(accepted.bundleId) in \(accepted.environment.rawValue), \(what), \(accepted.matchedTransactions.count) matching purchases")
        } else if let failure {
            lines.append("REMOTE INVALID: \(failure.code): \(failure.reason)")
        }
        if let agreement {
            if agreement.agrees {
                lines.append("AGREE: the offline verdict and Apple's reply describe the same receipt")
            } else {
                lines.append("DISAGREE: " + agreement.differences.map(\.description).joined(separator: "; "))
            }
        } else if accepted != nil, !hasFacts {
            lines.append("DISAGREE: the receipt did not verify offline, so Apple's reply cannot be confirmed")
        }
        lines.append(overall ? "VALID (offline and remote)" : "INVALID (offline and remote verdicts combined)")
        return lines.joined(separator: "\n")
    }
}

public import Foundation
public import StoreGateCore
public import StoreGateReceipt

/// A verifyReceipt reply that describes the expected purchase: the only form in which
/// StoreGate treats Apple's answer as evidence.
public struct AcceptedVerifyReceiptReply: Sendable, Hashable {
    /// What the reply says about the purchase.
    public enum Outcome: String, Sendable, Hashable, Codable {
        /// Status 0: the receipt is valid.
        case valid
        /// Status 21006: the receipt is valid, the subscription has expired.
        case subscriptionExpired = "subscription_expired"
    }

    /// What the reply says about the purchase.
    public let outcome: Outcome
    /// The environment of the reply (equal to the endpoint that answered it).
    public let environment: AppStoreEnvironment
    /// The bundle id Apple names.
    public let bundleId: String
    /// The reply's entries for the expected transaction (at least one), or every purchase of
    /// the receipt when no purchase was expected.
    public let matchedTransactions: [VerifyReceiptTransaction]
    /// When the expected purchase was refunded or revoked, if it was.
    public let revocationDate: Date?
    /// The whole reply.
    public let reply: VerifyReceiptResponse
    /// How the reply was reached.
    public let route: [VerifyReceiptClient.Exchange.Hop]
}

/// Checks a verifyReceipt reply against the purchase being verified.
///
/// The 2012 "in-appstore" attack answered `{"status": 0}` from a fake server, and apps that
/// read only the status believed it. A reply is accepted only when, in this order:
/// 1. its status is 0, or 21006 (reported as ``AcceptedVerifyReceiptReply/Outcome/subscriptionExpired``);
/// 2. it carries a receipt;
/// 3. the receipt's bundle id is the expected one;
/// 4. its `environment` is that of the endpoint that answered, and one the caller accepts;
/// 5. it contains the expected transaction (in `receipt.in_app`, an iOS 6-style receipt's top
///    level, or `latest_receipt_info`), and every entry for that transaction has the expected
///    product id and quantity.
/// Each failure has its own ``AppStoreClientError/Code``.
public enum VerifyReceiptReplyVerifier {
    /// Checks the final reply of an exchange.
    ///
    /// - Throws: ``AppStoreClientError`` with ``AppStoreClientError/Code/replyStatus``,
    ///   ``AppStoreClientError/Code/missingReceipt``, ``AppStoreClientError/Code/bundleIdMismatch``,
    ///   ``AppStoreClientError/Code/environmentMismatch``, ``AppStoreClientError/Code/environmentNotAllowed``,
    ///   ``AppStoreClientError/Code/transactionNotFound``, ``AppStoreClientError/Code/productIdMismatch``
    ///   or ``AppStoreClientError/Code/quantityMismatch``.
    public static func check(_ exchange: VerifyReceiptClient.Exchange, expecting expectation: VerifyReceiptExpectation) throws(AppStoreClientError) -> AcceptedVerifyReceiptReply {
        try check(exchange.reply, answeredBy: exchange.answeredBy, route: exchange.route, expecting: expectation)
    }

    /// Checks one reply given by the endpoint of `answeredBy`.
    public static func check(
        _ reply: VerifyReceiptResponse,
        answeredBy: AppStoreEnvironment,
        route: [VerifyReceiptClient.Exchange.Hop] = [],
        expecting expectation: VerifyReceiptExpectation
    ) throws(AppStoreClientError) -> AcceptedVerifyReceiptReply {
        let outcome: AcceptedVerifyReceiptReply.Outcome
        switch reply.status {
        case .valid: outcome = .valid
        case .subscriptionExpired: outcome = .subscriptionExpired
        default:
            throw AppStoreClientError(.replyStatus, reason: reply.status.meaning, status: reply.status, environment: answeredBy)
        }

        guard let receipt = reply.receipt else {
            throw AppStoreClientError(.missingReceipt, reason: "the reply says status \(reply.status) but carries no receipt", status: reply.status, environment: answeredBy)
        }

        guard let bundleId = receipt.bundleId else {
            throw AppStoreClientError(.bundleIdMismatch, reason: "the reply's receipt names no bundle id", environment: answeredBy)
        }
        guard bundleId == expectation.bundleId else {
            throw AppStoreClientError(.bundleIdMismatch, reason: "the reply is for \(bundleId), not \(expectation.bundleId)", environment: answeredBy)
        }

        let environment = reply.environment ?? answeredBy
        guard environment == answeredBy else {
            throw AppStoreClientError(
                .environmentMismatch,
                reason: "the \(answeredBy) endpoint answered a reply that says \(environment)",
                environment: answeredBy
            )
        }
        guard expectation.environments.contains(environment) else {
            throw AppStoreClientError(.environmentNotAllowed, reason: "\(environment) receipts are not accepted here", environment: answeredBy)
        }

        let matched: [VerifyReceiptTransaction]
        var revocationDate: Date?
        if let purchase = expectation.purchase {
            let candidates = receipt.transactions + reply.latestReceiptInfo
            matched = candidates.filter { $0.transactionId == purchase.transactionId }
            guard !matched.isEmpty else {
                throw AppStoreClientError(
                    .transactionNotFound,
                    reason: "the reply does not contain transaction \(purchase.transactionId) (\(candidates.count) purchases in it)",
                    environment: answeredBy
                )
            }
            for entry in matched {
                guard entry.productId == purchase.productId else {
                    throw AppStoreClientError(
                        .productIdMismatch,
                        reason: "transaction \(purchase.transactionId) is for \(entry.productId ?? "no product"), not \(purchase.productId)",
                        environment: answeredBy
                    )
                }
                guard entry.quantity == purchase.quantity else {
                    throw AppStoreClientError(
                        .quantityMismatch,
                        reason: "transaction \(purchase.transactionId) has quantity \(entry.quantity.map(String.init) ?? "none"), not \(purchase.quantity)",
                        environment: answeredBy
                    )
                }
            }
            revocationDate = matched.compactMap(\.cancellationDate).min()
        } else {
            matched = receipt.transactions
            revocationDate = nil
        }

        return AcceptedVerifyReceiptReply(
            outcome: outcome,
            environment: environment,
            bundleId: bundleId,
            matchedTransactions: matched,
            revocationDate: revocationDate,
            reply: reply,
            route: route
        )
    }
}

import Foundation
public import StoreGateCore

/// A signed transaction whose chain, signature and expectations ``SignedDataVerifier`` checked,
/// with the renewal info sent beside it when there was one.
///
/// Every member the ledger needs was checked in the payload step, so ``transaction`` and
/// ``proof`` cannot fail.
public struct VerifiedSignedTransaction: Sendable {
    /// The decoded payload.
    public let payload: JWSTransactionDecodedPayload
    /// How it was verified.
    public let details: SignedDataDetails
    /// The transaction in the ledger's shape.
    public let transaction: VerifiedTransaction
    /// The renewal info verified with it (``SignedDataVerifier/verifyTransaction(_:renewalInfo:expecting:)``):
    /// the same subscription and environment.
    public let renewalInfo: VerifiedSignedRenewalInfo?
    /// The JWS exactly as received, for encrypted storage; never log it.
    public let rawJWS: [UInt8]

    /// The environment StoreGate reports for it.
    public var environment: AppStoreEnvironment { details.environment }

    /// The whole proof in the ledger's shape: the transaction and its renewal info, kind
    /// `ProofKind.signedTransaction`.
    public var proof: VerifiedProof {
        VerifiedProof(
            kind: .signedTransaction,
            environment: details.environment,
            bundleId: transaction.bundleId,
            signedDate: transaction.signedDate,
            transactions: [transaction],
            renewalInfo: renewalInfo?.renewalInfo,
            rawProof: rawJWS
        )
    }

    init(payload: JWSTransactionDecodedPayload, details: SignedDataDetails, fields: Fields, renewalInfo: VerifiedSignedRenewalInfo? = nil, rawJWS: [UInt8]) {
        self.payload = payload
        self.details = details
        self.transaction = fields.transaction(payload, environment: details.environment)
        self.renewalInfo = renewalInfo
        self.rawJWS = rawJWS
    }

    /// The same transaction with its renewal info.
    func with(_ renewalInfo: VerifiedSignedRenewalInfo) -> VerifiedSignedTransaction {
        VerifiedSignedTransaction(payload: payload, details: details, transaction: transaction, renewalInfo: renewalInfo, rawJWS: rawJWS)
    }

    private init(payload: JWSTransactionDecodedPayload, details: SignedDataDetails, transaction: VerifiedTransaction, renewalInfo: VerifiedSignedRenewalInfo?, rawJWS: [UInt8]) {
        self.payload = payload
        self.details = details
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.rawJWS = rawJWS
    }

    /// The members the ledger needs, checked in the payload step: `bundleId`, `transactionId`,
    /// `originalTransactionId`, `productId`, `purchaseDate`, `signedDate`, a positive `quantity`.
    struct Fields: Sendable {
        let bundleId: String
        let transactionId: String
        let originalTransactionId: String
        let productId: String
        let quantity: Int
        let purchaseDate: Date
        let signedDate: Date

        /// - Throws: ``SignedDataError/Code/missingField`` or ``SignedDataError/Code/invalidField``
        ///   (payload step), the member named under `path`.
        init(_ payload: JWSTransactionDecodedPayload, path: String) throws(SignedDataError) {
            func required<T>(_ value: T?, _ name: String) throws(SignedDataError) -> T {
                guard let value else {
                    throw SignedDataError(.missingField, field: path + name, reason: "the transaction has no \(name)")
                }
                return value
            }
            quantity = try required(payload.quantity, "quantity")
            guard quantity > 0 else {
                throw SignedDataError(.invalidField, field: path + "quantity", reason: "quantity must be positive")
            }
            bundleId = try required(payload.bundleId, "bundleId")
            transactionId = try required(payload.transactionId, "transactionId")
            originalTransactionId = try required(payload.originalTransactionId, "originalTransactionId")
            productId = try required(payload.productId, "productId")
            purchaseDate = try required(payload.purchaseDate, "purchaseDate")
            signedDate = try required(payload.signedDate, "signedDate")
        }

        func transaction(_ payload: JWSTransactionDecodedPayload, environment: AppStoreEnvironment) -> VerifiedTransaction {
            VerifiedTransaction(
                environment: environment,
                bundleId: bundleId,
                transactionId: transactionId,
                originalTransactionId: originalTransactionId,
                productId: productId,
                productType: payload.type,
                quantity: quantity,
                purchaseDate: purchaseDate,
                originalPurchaseDate: payload.originalPurchaseDate,
                expiresDate: payload.expiresDate,
                revocationDate: payload.revocationDate,
                revocationReason: payload.revocationReason?.rawValue,
                webOrderLineItemId: payload.webOrderLineItemId,
                subscriptionGroupIdentifier: payload.subscriptionGroupIdentifier,
                appAccountToken: payload.appAccountToken,
                isUpgraded: payload.isUpgraded ?? false,
                signedDate: signedDate,
                source: .signedTransaction,
                money: payload.moneyFacts
            )
        }
    }
}

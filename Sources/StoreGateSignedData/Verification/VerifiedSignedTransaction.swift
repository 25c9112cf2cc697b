import Foundation
import StoreGateCore

/// A signed transaction whose chain, signature and expectations ``SignedDataVerifier`` checked.
public struct VerifiedSignedTransaction: Sendable {
    /// The decoded payload.
    public let payload: JWSTransactionDecodedPayload
    /// How it was verified.
    public let details: SignedDataDetails
    /// The JWS exactly as received, for encrypted storage; never log it.
    public let rawJWS: [UInt8]

    /// The environment StoreGate reports for it.
    public var environment: Environment { details.environment }

    /// The transaction in the ledger's shape.
    ///
    /// - Throws: ``SignedDataError/Code/missingField`` (payload step) when the payload lacks a
    ///   member the ledger needs: `bundleId`, `transactionId`, `originalTransactionId`,
    ///   `productId`, `purchaseDate`, `signedDate`, a positive `quantity`.
    public func transaction() throws(SignedDataError) -> VerifiedTransaction {
        try Self.ledgerTransaction(payload, environment: details.environment, path: "")
    }

    /// The whole proof in the ledger's shape: one transaction, kind ``StoreGateCore/ProofKind/signedTransaction``.
    ///
    /// - Throws: as ``transaction()``.
    public func proof() throws(SignedDataError) -> VerifiedProof {
        let transaction = try transaction()
        return VerifiedProof(
            kind: .signedTransaction,
            environment: details.environment,
            bundleId: transaction.bundleId,
            signedDate: transaction.signedDate,
            transactions: [transaction],
            rawProof: rawJWS
        )
    }

    static func ledgerTransaction(
        _ payload: JWSTransactionDecodedPayload,
        environment: Environment,
        path: String
    ) throws(SignedDataError) -> VerifiedTransaction {
        func required<T>(_ value: T?, _ name: String) throws(SignedDataError) -> T {
            guard let value else {
                throw SignedDataError(.missingField, field: path + name, reason: "the transaction has no \(name)")
            }
            return value
        }
        let quantity = try required(payload.quantity, "quantity")
        guard quantity > 0 else {
            throw SignedDataError(.invalidField, field: path + "quantity", reason: "quantity must be positive")
        }
        return VerifiedTransaction(
            environment: environment,
            bundleId: try required(payload.bundleId, "bundleId"),
            transactionId: try required(payload.transactionId, "transactionId"),
            originalTransactionId: try required(payload.originalTransactionId, "originalTransactionId"),
            productId: try required(payload.productId, "productId"),
            productType: payload.type,
            quantity: quantity,
            purchaseDate: try required(payload.purchaseDate, "purchaseDate"),
            originalPurchaseDate: payload.originalPurchaseDate,
            expiresDate: payload.expiresDate,
            revocationDate: payload.revocationDate,
            revocationReason: payload.revocationReason?.rawValue,
            webOrderLineItemId: payload.webOrderLineItemId,
            subscriptionGroupIdentifier: payload.subscriptionGroupIdentifier,
            appAccountToken: payload.appAccountToken,
            isUpgraded: payload.isUpgraded ?? false,
            signedDate: try required(payload.signedDate, "signedDate"),
            source: .signedTransaction
        )
    }
}

public import Foundation
public import StoreGateCore

/// An app receipt whose signature, chain and expectations StoreGate checked.
///
/// Only ``ReceiptVerifier`` creates one.
public struct VerifiedReceipt: Sendable {
    /// The decoded payload.
    public let receipt: AppReceipt
    /// The environment reported: the receipt's own under an Apple root; `Xcode` or `Test`
    /// under an opt-in anchor.
    public let environment: AppStoreEnvironment
    /// The validated signer and chain.
    public let signer: ValidatedSigner
    public let digestAlgorithm: ReceiptDigestAlgorithm
    public let signatureAlgorithm: ReceiptSignatureAlgorithm
    /// The time certificates were checked at.
    public let validationTime: Date
    /// Each expectation and its result.
    public let checks: [ExpectationCheck]
    /// The receipt exactly as received.
    public let rawReceipt: [UInt8]

    /// The in-app purchases as verified transactions, for the ledger.
    public var transactions: [VerifiedTransaction] {
        receipt.inAppPurchases.map { purchase in
            VerifiedTransaction(
                environment: environment,
                bundleId: receipt.bundleId,
                transactionId: purchase.transactionId,
                originalTransactionId: purchase.originalTransactionId ?? purchase.transactionId,
                productId: purchase.productId,
                productType: nil,
                quantity: purchase.quantity,
                purchaseDate: purchase.purchaseDate,
                originalPurchaseDate: purchase.originalPurchaseDate,
                expiresDate: purchase.subscriptionExpirationDate,
                revocationDate: purchase.cancellationDate,
                revocationReason: nil,
                webOrderLineItemId: purchase.webOrderLineItemId.map { String($0) },
                subscriptionGroupIdentifier: nil,
                appAccountToken: nil,
                isUpgraded: false,
                signedDate: receipt.creationDate,
                source: .appReceipt
            )
        }
    }

    /// The receipt as a verified proof the ledger can record.
    public var proof: VerifiedProof {
        VerifiedProof(
            kind: .appReceipt,
            environment: environment,
            bundleId: receipt.bundleId,
            signedDate: receipt.creationDate,
            transactions: transactions,
            rawProof: rawReceipt
        )
    }

    init(
        receipt: AppReceipt,
        environment: AppStoreEnvironment,
        signer: ValidatedSigner,
        digestAlgorithm: ReceiptDigestAlgorithm,
        signatureAlgorithm: ReceiptSignatureAlgorithm,
        validationTime: Date,
        checks: [ExpectationCheck],
        rawReceipt: [UInt8]
    ) {
        self.receipt = receipt
        self.environment = environment
        self.signer = signer
        self.digestAlgorithm = digestAlgorithm
        self.signatureAlgorithm = signatureAlgorithm
        self.validationTime = validationTime
        self.checks = checks
        self.rawReceipt = rawReceipt
    }
}

package import Foundation
package import StoreGateCore

extension VerifiedProof {
    /// A verified signed transaction of one auto-renewable period (`pro.monthly`, group `pro`,
    /// its own purchase family) of `days` ending at `end`: for tests and benchmarks that need a
    /// subscription in the ledger without minting and verifying a JWS. The raw proof is the
    /// transaction id's bytes.
    package static func subscriptionPeriod(_ transactionId: String, bundleId: String, endingAt end: Date, days: Double = 30) -> VerifiedProof {
        let start = end.addingTimeInterval(-days * 86_400)
        let period = VerifiedTransaction(
            environment: .production, bundleId: bundleId, transactionId: transactionId, originalTransactionId: transactionId,
            productId: "pro.monthly", productType: .autoRenewable, quantity: 1, purchaseDate: start, originalPurchaseDate: start,
            expiresDate: end, revocationDate: nil, revocationReason: nil, webOrderLineItemId: nil,
            subscriptionGroupIdentifier: "pro", appAccountToken: nil, isUpgraded: false, signedDate: start, source: .signedTransaction
        )
        return VerifiedProof(
            kind: .signedTransaction, environment: .production, bundleId: bundleId, signedDate: start,
            transactions: [period], rawProof: Array(transactionId.utf8)
        )
    }
}

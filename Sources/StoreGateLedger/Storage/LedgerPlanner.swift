package import Foundation
package import StoreGateCore

/// A proof validated, normalized and sealed for one account, ready to be planned.
///
/// Preparing happens outside any lock or database transaction (validation, the catalog,
/// AES-GCM); planning happens inside, against the rows loaded for ``familyKeys`` and
/// ``transactionKeys``.
package struct PreparedProof: Sendable {
    package var account: AccountID
    /// The incoming observations, one per transaction key, sorted by key.
    package var transactions: [TransactionRow]
    package var renewal: RenewalRow?
    package var proof: ProofRow
    package var familyKeys: [FamilyKey]
    package var transactionKeys: [TransactionKey]
}

/// A notification validated, normalized and sealed, ready to be planned.
package struct PreparedNotification: Sendable {
    package var notification: NotificationRow
    package var transaction: TransactionRow?
    package var renewal: RenewalRow?
    package var proof: ProofRow
    /// The family of the transaction, and of the renewal info (a renewal-only notification's
    /// events need the family's owner and transactions).
    package var familyKeys: [FamilyKey] {
        var keys = transaction.map { [$0.familyKey] } ?? []
        if let renewal, !keys.contains(renewal.key) { keys.append(renewal.key) }
        return keys.sorted()
    }
    package var transactionKeys: [TransactionKey] { transaction.map { [$0.key] } ?? [] }
}

/// The ledger's rules for recording, shared by every backend: validation, ownership, the
/// merge of observations and the consumable counters. Backends only load and store rows.
package struct LedgerPlanner: Sendable {
    /// The longest accepted identifier (transaction, product, idempotency key), in UTF-8 bytes.
    package static let maximumIdentifierLength = 256
    /// The largest accepted quantity of one transaction or consumption.
    package static let maximumQuantity = 1_000_000

    package let configuration: LedgerConfiguration

    package init(configuration: LedgerConfiguration) {
        self.configuration = configuration
    }

    // MARK: Preparing

    /// Validates a proof for `account` and seals its raw bytes.
    ///
    /// - Throws: ``LedgerError/Code/environmentMismatch``, ``LedgerError/Code/invalidArgument``,
    ///   ``LedgerError/Code/appAccountTokenMismatch``, or an encryption error.
    package func prepare(_ proof: VerifiedProof, for account: AccountID, receivedAt: Date) throws(LedgerError) -> PreparedProof {
        let token = configuration.accountTokenPolicy.token(for: account)
        var rows: [TransactionKey: TransactionRow] = [:]
        let digest = ProofDigest(of: proof.rawProof)
        for transaction in proof.transactions {
            guard transaction.environment == proof.environment else {
                throw LedgerError(
                    .environmentMismatch,
                    reason: "a \(transaction.environment) transaction in a \(proof.environment) proof",
                    transactionId: transaction.transactionId
                )
            }
            if let stated = transaction.appAccountToken, stated != token {
                throw LedgerError(
                    .appAccountTokenMismatch,
                    reason: "the transaction's appAccountToken is not this account's token",
                    transactionId: transaction.transactionId
                )
            }
            let row = try makeRow(transaction, account: account, observedAt: transaction.signedDate, source: proof.kind, digest: digest)
            rows[row.key] = rows[row.key].map { $0.merged(with: row) } ?? row
        }
        let transactions = rows.values.sorted { $0.key < $1.key }
        return PreparedProof(
            account: account,
            transactions: transactions,
            renewal: try proof.renewalInfo.map { info throws(LedgerError) in try makeRenewal(info, observedAt: info.signedDate) },
            proof: try makeProof(proof.rawProof, digest: digest, kind: proof.kind, environment: proof.environment, receivedAt: receivedAt),
            familyKeys: Array(Set(transactions.map(\.familyKey))).sorted(),
            transactionKeys: transactions.map(\.key)
        )
    }

    /// Validates a notification and seals its raw bytes.
    ///
    /// The notification's signing date orders its effects. A `REFUND` or `REVOKE` revokes the
    /// transaction it carries even if that transaction states no revocation date (the
    /// notification's signing date is used); a `REFUND_REVERSED` reinstates it.
    package func prepare(_ notification: VerifiedNotification, receivedAt: Date) throws(LedgerError) -> PreparedNotification {
        try Self.checkIdentifier(notification.notificationUUID, "notificationUUID")
        let digest = ProofDigest(of: notification.rawProof)
        let signedDate = notification.signedDate.ledgerNormalized
        var row: TransactionRow?
        if let transaction = notification.transaction {
            var made = try makeRow(transaction, account: nil, observedAt: signedDate, source: .notification, digest: digest)
            switch notification.notificationType {
            case "REFUND", "REVOKE":
                if made.value.revocationDate == nil {
                    made.value.revocationDate = signedDate
                }
            case "REFUND_REVERSED":
                made.value.revocationDate = nil
                made.value.revocationReason = nil
            default:
                break
            }
            row = made
        }
        let summary = RecordedNotification(
            notificationUUID: notification.notificationUUID,
            notificationType: notification.notificationType,
            subtype: notification.subtype,
            signedDate: signedDate,
            environment: notification.environment,
            transactionId: notification.transaction?.transactionId,
            originalTransactionId: notification.transaction?.originalTransactionId ?? notification.renewalInfo?.originalTransactionId
        )
        return PreparedNotification(
            notification: NotificationRow(summary: summary, proofDigest: digest),
            transaction: row,
            renewal: try notification.renewalInfo.map { info throws(LedgerError) in try makeRenewal(info, observedAt: signedDate) },
            proof: try makeProof(notification.rawProof, digest: digest, kind: .notification, environment: notification.environment, receivedAt: receivedAt)
        )
    }

    /// Validates the arguments of a consumption.
    package static func checkConsumption(productId: String, quantity: Int, idempotencyKey: String) throws(LedgerError) {
        try checkIdentifier(productId, "productId")
        try checkIdentifier(idempotencyKey, "idempotencyKey")
        guard (1...maximumQuantity).contains(quantity) else {
            throw LedgerError(.invalidArgument, reason: "a quantity is 1...\(maximumQuantity), got \(quantity)", productId: productId)
        }
    }

    /// Validates a product id used in a query.
    package static func checkProductId(_ productId: String) throws(LedgerError) {
        try checkIdentifier(productId, "productId")
    }

    package static func checkIdentifier(_ value: String, _ field: String, transactionId: String? = nil) throws(LedgerError) {
        let length = value.utf8.count
        guard length > 0, length <= maximumIdentifierLength else {
            throw LedgerError(.invalidArgument, reason: "\(field) has 1...\(maximumIdentifierLength) UTF-8 bytes, got \(length)", transactionId: transactionId)
        }
    }

    private func makeRow(
        _ transaction: VerifiedTransaction, account: AccountID?, observedAt: Date, source: ProofKind, digest: ProofDigest
    ) throws(LedgerError) -> TransactionRow {
        let id = transaction.transactionId
        try Self.checkIdentifier(id, "transactionId")
        try Self.checkIdentifier(transaction.originalTransactionId, "originalTransactionId", transactionId: id)
        try Self.checkIdentifier(transaction.productId, "productId", transactionId: id)
        try Self.checkIdentifier(transaction.bundleId, "bundleId", transactionId: id)
        guard (1...Self.maximumQuantity).contains(transaction.quantity) else {
            throw LedgerError(.invalidArgument, reason: "a quantity is 1...\(Self.maximumQuantity), got \(transaction.quantity)", transactionId: id)
        }
        let catalog = configuration.catalog
        let expires = transaction.expiresDate?.ledgerNormalized
        let value = RecordedTransaction(
            environment: transaction.environment,
            transactionId: id,
            originalTransactionId: transaction.originalTransactionId,
            account: account,
            bundleId: transaction.bundleId,
            productId: transaction.productId,
            productType: catalog.productType(for: transaction.productId, stated: transaction.productType, expiresDate: expires),
            subscriptionGroup: catalog.subscriptionGroup(for: transaction.productId, stated: transaction.subscriptionGroupIdentifier),
            quantity: transaction.quantity,
            purchaseDate: transaction.purchaseDate.ledgerNormalized,
            originalPurchaseDate: transaction.originalPurchaseDate?.ledgerNormalized,
            expiresDate: expires,
            revocationDate: transaction.revocationDate?.ledgerNormalized,
            revocationReason: transaction.revocationReason,
            isUpgraded: transaction.isUpgraded,
            webOrderLineItemId: transaction.webOrderLineItemId,
            appAccountToken: transaction.appAccountToken,
            observedAt: observedAt.ledgerNormalized,
            source: source,
            proofDigest: digest,
            money: try Self.checkMoney(transaction.money, transactionId: id)
        )
        return TransactionRow(value: value, hasAppleMetadata: transaction.productType != nil)
    }

    /// Validates the money facts of a transaction: short texts (currency and storefront codes,
    /// offer identifiers), a price that is not negative.
    package static func checkMoney(_ money: MoneyFacts?, transactionId: String) throws(LedgerError) -> MoneyFacts? {
        guard let money else { return nil }
        if let price = money.price, price < 0 {
            throw LedgerError(.invalidArgument, reason: "a price is not negative, got \(price)", transactionId: transactionId)
        }
        let texts: [(String?, String)] = [
            (money.currency, "currency"), (money.storefront, "storefront"), (money.offerIdentifier, "offerIdentifier"),
            (money.offerPeriod, "offerPeriod"), (money.offerDiscountType, "offerDiscountType"), (money.transactionReason, "transactionReason"),
        ]
        for case (let text?, let field) in texts {
            try checkIdentifier(text, field, transactionId: transactionId)
        }
        return money
    }

    private func makeRenewal(_ info: VerifiedRenewalInfo, observedAt: Date) throws(LedgerError) -> RenewalRow {
        try Self.checkIdentifier(info.originalTransactionId, "originalTransactionId")
        try Self.checkIdentifier(info.productId, "productId")
        return RenewalRow(
            key: FamilyKey(environment: info.environment, originalTransactionId: info.originalTransactionId),
            productId: info.productId,
            autoRenewProductId: info.autoRenewProductId,
            willAutoRenew: info.willAutoRenew,
            expirationIntent: info.expirationIntent,
            isInBillingRetryPeriod: info.isInBillingRetryPeriod,
            gracePeriodExpiresDate: info.gracePeriodExpiresDate?.ledgerNormalized,
            renewalDate: info.renewalDate?.ledgerNormalized,
            observedAt: observedAt.ledgerNormalized
        )
    }

    private func makeProof(
        _ raw: [UInt8], digest: ProofDigest, kind: ProofKind, environment: AppStoreEnvironment, receivedAt: Date
    ) throws(LedgerError) -> ProofRow {
        let sealed = try configuration.encryption.map { encryption throws(LedgerError) in try encryption.seal(raw, digest: digest) }
        return ProofRow(digest: digest, kind: kind, environment: environment, sealed: sealed, receivedAt: receivedAt.ledgerNormalized)
    }
}

import Foundation
import StoreGateCore
@testable import StoreGateLedger

/// Builds the verified values the ledger accepts (their initializers are `package`, so tests
/// in this package may mint them directly).
enum Purchases {
    /// A fixed reference date: 2023-11-14T22:13:20Z.
    static let t0 = Date(timeIntervalSince1970: 1_700_000_000)
    static let day: TimeInterval = 86_400

    static func date(_ days: Double) -> Date { t0.addingTimeInterval(days * day) }

    static func transaction(
        _ id: String,
        original: String? = nil,
        product: String,
        type: ProductType? = nil,
        quantity: Int = 1,
        purchased: Date = t0,
        expires: Date? = nil,
        revoked: Date? = nil,
        upgraded: Bool = false,
        group: String? = nil,
        token: UUID? = nil,
        webOrder: String? = nil,
        environment: AppStoreEnvironment = .production,
        signed: Date? = nil,
        source: ProofKind = .signedTransaction,
        money: MoneyFacts? = nil
    ) -> VerifiedTransaction {
        VerifiedTransaction(
            environment: environment,
            bundleId: "com.example.app",
            transactionId: id,
            originalTransactionId: original ?? id,
            productId: product,
            productType: type,
            quantity: quantity,
            purchaseDate: purchased,
            originalPurchaseDate: purchased,
            expiresDate: expires,
            revocationDate: revoked,
            revocationReason: revoked == nil ? nil : 0,
            webOrderLineItemId: webOrder,
            subscriptionGroupIdentifier: group,
            appAccountToken: token,
            isUpgraded: upgraded,
            signedDate: signed ?? purchased,
            source: source,
            money: money
        )
    }

    static func consumable(_ id: String, product: String = "coins", quantity: Int = 1, at date: Date = t0, revoked: Date? = nil, signed: Date? = nil, environment: AppStoreEnvironment = .production) -> VerifiedTransaction {
        transaction(id, product: product, type: .consumable, quantity: quantity, purchased: date, revoked: revoked, environment: environment, signed: signed)
    }

    static func nonConsumable(_ id: String, product: String = "pro.lifetime", at date: Date = t0, revoked: Date? = nil, signed: Date? = nil, token: UUID? = nil) -> VerifiedTransaction {
        transaction(id, product: product, type: .nonConsumable, purchased: date, revoked: revoked, token: token, signed: signed)
    }

    /// One period of an auto-renewable subscription in group "pro" starting at `start` days.
    static func period(
        _ id: String, original: String, product: String = "pro.monthly", start: Double, days: Double = 30,
        revoked: Date? = nil, upgraded: Bool = false, group: String? = "pro", signed: Date? = nil, money: MoneyFacts? = nil
    ) -> VerifiedTransaction {
        transaction(
            id, original: original, product: product, type: .autoRenewable, purchased: date(start),
            expires: date(start + days), revoked: revoked, upgraded: upgraded, group: group, signed: signed ?? date(start), money: money
        )
    }

    static func proof(
        _ transactions: [VerifiedTransaction], kind: ProofKind = .signedTransaction, environment: AppStoreEnvironment = .production,
        renewal: VerifiedRenewalInfo? = nil, signed: Date? = nil, raw: [UInt8]? = nil
    ) -> VerifiedProof {
        let signedDate = signed ?? transactions.map(\.signedDate).max() ?? t0
        return VerifiedProof(
            kind: kind,
            environment: environment,
            bundleId: "com.example.app",
            signedDate: signedDate,
            transactions: transactions,
            renewalInfo: renewal,
            rawProof: raw ?? Array("proof:\(kind.rawValue):\(transactions.map(\.transactionId).joined(separator: ",")):\(signedDate.timeIntervalSince1970)".utf8)
        )
    }

    static func proof(_ transaction: VerifiedTransaction, renewal: VerifiedRenewalInfo? = nil) -> VerifiedProof {
        proof([transaction], kind: transaction.source, renewal: renewal)
    }

    static func renewal(
        original: String, product: String = "pro.monthly", autoRenewProduct: String? = nil, willRenew: Bool = true,
        billingRetry: Bool = false, grace: Date? = nil, signed: Date, environment: AppStoreEnvironment = .production
    ) -> VerifiedRenewalInfo {
        VerifiedRenewalInfo(
            environment: environment,
            originalTransactionId: original,
            productId: product,
            autoRenewProductId: autoRenewProduct ?? product,
            willAutoRenew: willRenew,
            expirationIntent: willRenew ? nil : 1,
            isInBillingRetryPeriod: billingRetry,
            gracePeriodExpiresDate: grace,
            renewalDate: nil,
            signedDate: signed
        )
    }

    static func notification(
        _ uuid: String, type: String, subtype: String? = nil, signed: Date,
        transaction: VerifiedTransaction? = nil, renewal: VerifiedRenewalInfo? = nil, environment: AppStoreEnvironment = .production
    ) -> VerifiedNotification {
        VerifiedNotification(
            notificationUUID: uuid,
            notificationType: type,
            subtype: subtype,
            signedDate: signed,
            environment: environment,
            bundleId: "com.example.app",
            transaction: transaction,
            renewalInfo: renewal,
            rawProof: Array("notification:\(uuid)".utf8)
        )
    }

    static func account(_ name: String) -> AccountID {
        do { return try AccountID(name) } catch { preconditionFailure("test account ids are valid: \(error)") }
    }
}

import Foundation
public import StoreGateCore

/// A signed renewal info whose chain, signature and expectations ``SignedDataVerifier`` checked.
public struct VerifiedSignedRenewalInfo: Sendable {
    /// The decoded payload.
    public let payload: JWSRenewalInfoDecodedPayload
    /// How it was verified.
    public let details: SignedDataDetails
    /// The renewal state in the ledger's shape (its members were checked in the payload step).
    public let renewalInfo: VerifiedRenewalInfo
    /// The JWS exactly as received, for encrypted storage; never log it.
    public let rawJWS: [UInt8]

    /// The environment StoreGate reports for it.
    public var environment: AppStoreEnvironment { details.environment }

    init(payload: JWSRenewalInfoDecodedPayload, details: SignedDataDetails, fields: Fields, rawJWS: [UInt8]) {
        self.payload = payload
        self.details = details
        self.renewalInfo = fields.renewalInfo(payload, environment: details.environment)
        self.rawJWS = rawJWS
    }

    /// The members the ledger needs, checked in the payload step: `originalTransactionId`,
    /// `productId`, `signedDate`.
    struct Fields: Sendable {
        let originalTransactionId: String
        let productId: String
        let signedDate: Date

        /// - Throws: ``SignedDataError/Code/missingField`` (payload step), the member named under `path`.
        init(_ payload: JWSRenewalInfoDecodedPayload, path: String) throws(SignedDataError) {
            func required<T>(_ value: T?, _ name: String) throws(SignedDataError) -> T {
                guard let value else {
                    throw SignedDataError(.missingField, field: path + name, reason: "the renewal info has no \(name)")
                }
                return value
            }
            originalTransactionId = try required(payload.originalTransactionId, "originalTransactionId")
            productId = try required(payload.productId, "productId")
            signedDate = try required(payload.signedDate, "signedDate")
        }

        func renewalInfo(_ payload: JWSRenewalInfoDecodedPayload, environment: AppStoreEnvironment) -> VerifiedRenewalInfo {
            VerifiedRenewalInfo(
                environment: environment,
                originalTransactionId: originalTransactionId,
                productId: productId,
                autoRenewProductId: payload.autoRenewProductId,
                willAutoRenew: payload.autoRenewStatus == .on,
                expirationIntent: payload.expirationIntent?.rawValue,
                isInBillingRetryPeriod: payload.isInBillingRetryPeriod ?? false,
                gracePeriodExpiresDate: payload.gracePeriodExpiresDate,
                renewalDate: payload.renewalDate,
                signedDate: signedDate
            )
        }
    }
}

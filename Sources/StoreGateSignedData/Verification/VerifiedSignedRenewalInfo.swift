import Foundation
import StoreGateCore

/// A signed renewal info whose chain, signature and expectations ``SignedDataVerifier`` checked.
public struct VerifiedSignedRenewalInfo: Sendable {
    /// The decoded payload.
    public let payload: JWSRenewalInfoDecodedPayload
    /// How it was verified.
    public let details: SignedDataDetails
    /// The JWS exactly as received, for encrypted storage; never log it.
    public let rawJWS: [UInt8]

    /// The environment StoreGate reports for it.
    public var environment: Environment { details.environment }

    /// The renewal state in the ledger's shape.
    ///
    /// - Throws: ``SignedDataError/Code/missingField`` (payload step) when the payload lacks
    ///   `originalTransactionId`, `productId` or `signedDate`.
    public func renewalInfo() throws(SignedDataError) -> VerifiedRenewalInfo {
        try Self.ledgerRenewalInfo(payload, environment: details.environment, path: "")
    }

    static func ledgerRenewalInfo(
        _ payload: JWSRenewalInfoDecodedPayload,
        environment: Environment,
        path: String
    ) throws(SignedDataError) -> VerifiedRenewalInfo {
        func required<T>(_ value: T?, _ name: String) throws(SignedDataError) -> T {
            guard let value else {
                throw SignedDataError(.missingField, field: path + name, reason: "the renewal info has no \(name)")
            }
            return value
        }
        return VerifiedRenewalInfo(
            environment: environment,
            originalTransactionId: try required(payload.originalTransactionId, "originalTransactionId"),
            productId: try required(payload.productId, "productId"),
            autoRenewProductId: payload.autoRenewProductId,
            willAutoRenew: payload.autoRenewStatus == .on,
            expirationIntent: payload.expirationIntent?.rawValue,
            isInBillingRetryPeriod: payload.isInBillingRetryPeriod ?? false,
            gracePeriodExpiresDate: payload.gracePeriodExpiresDate,
            renewalDate: payload.renewalDate,
            signedDate: try required(payload.signedDate, "signedDate")
        )
    }
}

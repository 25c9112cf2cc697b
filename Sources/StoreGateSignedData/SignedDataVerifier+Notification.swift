import Foundation
import StoreGateCore

extension SignedDataVerifier {
    /// Verifies an App Store Server Notification V2 `signedPayload`, and the signed data it
    /// nests (`data.signedTransactionInfo`, `data.signedRenewalInfo`,
    /// `appData.signedAppTransactionInfo`), each through its own chain and signature checks.
    ///
    /// The app and environment come from `data`, `summary`, `externalPurchaseToken` or
    /// `appData`; they must meet the expectations, and every nested payload must name the same
    /// bundle id and environment (a notification relaying another app's transaction is
    /// refused with ``SignedDataError/Code/nestedMismatch``). A notification without
    /// `signedDate` (early 2022 sandbox) is dated by its nested data, verified first; one with
    /// neither is checked at the clock's time, as Apple's libraries do.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed; failures inside nested data
    ///   name the nested member in ``SignedDataError/field``.
    public func verifyNotification(_ signedPayload: some StringProtocol) async throws(SignedDataError) -> VerifiedSignedNotification {
        try await verifyNotification(bytes: Array(signedPayload.utf8))
    }

    /// Verifies a notification `signedPayload` given as bytes.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed.
    public func verifyNotification(bytes: [UInt8]) async throws(SignedDataError) -> VerifiedSignedNotification {
        let (jws, signed, payload) = try open(bytes) { object throws(SignedDataError) in
            try ResponseBodyV2DecodedPayload(object: object)
        }
        let authentication: Authentication
        let nested: Nested
        let signingTime: Date
        let source: SignedDataDetails.SigningTimeSource
        if let signedDate = payload.signedDate {
            signingTime = signedDate
            source = .signedDate
            authentication = try await validateChain(jws, signed, signingTime: signedDate)
            nested = try await verifyNested(payload)
        } else {
            nested = try await verifyNested(payload)
            if let latest = nested.latestSignedDate {
                (signingTime, source) = (latest, .nestedSignedDate)
            } else {
                (signingTime, source) = (clock(), .clock)
            }
            authentication = try await validateChain(jws, signed, signingTime: signingTime)
        }

        let subject = payload.subject
        let subjectField = payload.data != nil ? "data." : payload.summary != nil ? "summary." : payload.externalPurchaseToken != nil ? "externalPurchaseToken." : "appData."
        try expectBundleId(subject.bundleId, field: subjectField + "bundleId")
        let environment = try expectEnvironment(subject.environment, authentication, field: subjectField + "environment")
        try expectAppAppleId(subject.appAppleId, environment: environment, field: subjectField + "appAppleId")
        try expectAge(source == .clock ? nil : signingTime)
        try nested.checkAgreement(bundleId: subject.bundleId, environment: environment)

        return VerifiedSignedNotification(
            payload: payload,
            details: details(.notification, jws, environment, authentication, signingTime, source),
            transaction: nested.transaction,
            renewalInfo: nested.renewalInfo,
            appTransaction: nested.appTransaction,
            rawJWS: bytes
        )
    }

    /// A notification's nested signed data, each verified by chain and signature.
    struct Nested {
        var transaction: VerifiedSignedTransaction?
        var renewalInfo: VerifiedSignedRenewalInfo?
        var appTransaction: VerifiedSignedAppTransaction?

        var latestSignedDate: Date? {
            [
                transaction?.details.signingTime,
                renewalInfo?.details.signingTime,
                appTransaction?.details.signingTimeSource == .signedDate ? appTransaction?.details.signingTime : nil,
            ].compactMap { $0 }.max()
        }

        /// Every nested payload names the notification's bundle id and environment.
        func checkAgreement(bundleId: String?, environment: (claimed: Environment, reported: Environment)) throws(SignedDataError) {
            if let transaction {
                let field = "data.signedTransactionInfo"
                guard transaction.payload.bundleId == bundleId else {
                    throw SignedDataError(
                        .expectations, .nestedMismatch, field: field + ".bundleId",
                        reason: "the nested transaction is for bundle \(transaction.payload.bundleId ?? "(none)"), the notification for \(bundleId ?? "(none)")")
                }
                try Self.agree(transaction.details, environment, field: field + ".environment")
            }
            if let renewalInfo {
                try Self.agree(renewalInfo.details, environment, field: "data.signedRenewalInfo.environment")
            }
            if let appTransaction {
                let field = "appData.signedAppTransactionInfo"
                guard appTransaction.payload.bundleId == bundleId else {
                    throw SignedDataError(
                        .expectations, .nestedMismatch, field: field + ".bundleId",
                        reason: "the nested app transaction is for bundle \(appTransaction.payload.bundleId ?? "(none)"), the notification for \(bundleId ?? "(none)")")
                }
                try Self.agree(appTransaction.details, environment, field: field + ".receiptType")
            }
        }

        private static func agree(
            _ details: SignedDataDetails,
            _ environment: (claimed: Environment, reported: Environment),
            field: String
        ) throws(SignedDataError) {
            guard details.claimedEnvironment == environment.claimed, details.environment == environment.reported else {
                throw SignedDataError(
                    .expectations, .nestedMismatch, field: field,
                    reason: "nested data is from \(details.environment.rawValue), the notification from \(environment.reported.rawValue)")
            }
        }
    }

    /// Verifies each nested JWS by structure, payload, chain and signature (its own
    /// `signedDate`); the expectations apply through the notification.
    private func verifyNested(_ payload: ResponseBodyV2DecodedPayload) async throws(SignedDataError) -> Nested {
        var nested = Nested()
        if let signed = payload.data?.signedTransactionInfo {
            let field = "data.signedTransactionInfo"
            do throws(SignedDataError) {
                let bytes = Array(signed.utf8)
                let (jws, signed, transaction) = try open(bytes) { object throws(SignedDataError) in
                    try JWSTransactionDecodedPayload(object: object, path: "")
                }
                let signedDate = try Self.required(transaction.signedDate, "signedDate")
                let authentication = try await validateChain(jws, signed, signingTime: signedDate)
                let environment = try Self.nestedEnvironment(transaction.environment, authentication, field: "environment")
                nested.transaction = VerifiedSignedTransaction(
                    payload: transaction,
                    details: details(.signedTransaction, jws, environment, authentication, signedDate, .signedDate),
                    rawJWS: bytes
                )
            } catch {
                throw error.nested(in: field)
            }
        }
        if let signed = payload.data?.signedRenewalInfo {
            let field = "data.signedRenewalInfo"
            do throws(SignedDataError) {
                let bytes = Array(signed.utf8)
                let (jws, signed, renewalInfo) = try open(bytes) { object throws(SignedDataError) in
                    try JWSRenewalInfoDecodedPayload(object: object, path: "")
                }
                let signedDate = try Self.required(renewalInfo.signedDate, "signedDate")
                let authentication = try await validateChain(jws, signed, signingTime: signedDate)
                let environment = try Self.nestedEnvironment(renewalInfo.environment, authentication, field: "environment")
                nested.renewalInfo = VerifiedSignedRenewalInfo(
                    payload: renewalInfo,
                    details: details(.signedRenewalInfo, jws, environment, authentication, signedDate, .signedDate),
                    rawJWS: bytes
                )
            } catch {
                throw error.nested(in: field)
            }
        }
        if let signed = payload.appData?.signedAppTransactionInfo {
            let field = "appData.signedAppTransactionInfo"
            do throws(SignedDataError) {
                let bytes = Array(signed.utf8)
                let (jws, signed, appTransaction) = try open(bytes) { object throws(SignedDataError) in
                    try AppTransaction(object: object, path: "")
                }
                let (signingTime, source) = Self.signingTime(of: appTransaction, clock: clock)
                let authentication = try await validateChain(jws, signed, signingTime: signingTime)
                let environment = try Self.nestedEnvironment(appTransaction.receiptType, authentication, field: "receiptType")
                nested.appTransaction = VerifiedSignedAppTransaction(
                    payload: appTransaction,
                    details: details(.appTransaction, jws, environment, authentication, signingTime, source),
                    rawJWS: bytes
                )
            } catch {
                throw error.nested(in: field)
            }
        }
        return nested
    }

    private static func nestedEnvironment(
        _ claimed: Environment?,
        _ authentication: Authentication,
        field: String
    ) throws(SignedDataError) -> (claimed: Environment, reported: Environment) {
        guard let claimed else {
            throw SignedDataError(.expectations, .nestedMismatch, field: field, reason: "the nested payload names no environment")
        }
        return (claimed, authentication.signer.reportedEnvironment(claimed: claimed))
    }
}

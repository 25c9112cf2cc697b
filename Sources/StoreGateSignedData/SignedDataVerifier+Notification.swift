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
    public func verifyNotification(
        _ signedPayload: some StringProtocol, expecting expectations: SignedDataExpectations? = nil
    ) async throws(SignedDataError) -> VerifiedSignedNotification {
        try await expecting(expectations).verifyNotification(bytes: Array(signedPayload.utf8), trace: nil)
    }

    /// Verifies a notification `signedPayload` given as bytes.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed.
    public func verifyNotification(bytes: [UInt8]) async throws(SignedDataError) -> VerifiedSignedNotification {
        try await verifyNotification(bytes: bytes, trace: nil)
    }

    func verifyNotification(bytes: [UInt8], trace: Trace?) async throws(SignedDataError) -> VerifiedSignedNotification {
        let (jws, signed, payload) = try open(bytes) { object throws(SignedDataError) in
            try ResponseBodyV2DecodedPayload(object: object)
        }
        let subjectField = payload.data != nil ? "data." : payload.summary != nil ? "summary." : payload.externalPurchaseToken != nil ? "externalPurchaseToken." : "appData."
        let fields = try VerifiedSignedNotification.Fields(payload, subjectField: subjectField)
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
        trace?.record(authentication, signingTime: signingTime, source: source)
        trace?.nested = nested

        let subject = payload.subject
        let claims = SignedDataClaims(
            kind: .notification, bundleId: subject.bundleId, claimedEnvironment: subject.environment, signer: authentication.signer,
            appAppleId: subject.appAppleId, signedDate: source == .clock ? nil : signingTime, signingTimeSource: source,
            productIds: nested.transaction.map { [$0.transaction.productId] } ?? [],
            transactionId: nested.transaction?.transaction.transactionId,
            nested: nested.claims, fields: .notification(subject: subjectField), clock: clock)
        try expect(claims, trace: trace)
        let environment = try claims.environments()

        return VerifiedSignedNotification(
            payload: payload,
            details: details(.notification, jws, environment, authentication, signingTime, source),
            fields: fields,
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

        /// What the nested-data check compares, in the order it compares them.
        var claims: [SignedDataClaims.Nested] {
            var claims: [SignedDataClaims.Nested] = []
            if let transaction {
                claims.append(.init(member: "data.signedTransactionInfo", bundleId: transaction.payload.bundleId, details: transaction.details))
            }
            if let renewalInfo {
                claims.append(.init(member: "data.signedRenewalInfo", bundleId: nil, details: renewalInfo.details))
            }
            if let appTransaction {
                claims.append(.init(member: "appData.signedAppTransactionInfo", bundleId: appTransaction.payload.bundleId, details: appTransaction.details))
            }
            return claims
        }
    }

    /// Verifies each nested JWS by structure, payload, chain and signature (its own
    /// `signedDate`); the expectations apply through the notification.
    private func verifyNested(_ payload: ResponseBodyV2DecodedPayload) async throws(SignedDataError) -> Nested {
        var nested = Nested()
        if let signed = payload.data?.signedTransactionInfo {
            let ((transaction, fields), details, bytes) = try await verifyNestedJWS(
                signed, field: "data.signedTransactionInfo", kind: .signedTransaction, environmentField: "environment",
                decode: { object throws(SignedDataError) in
                    let payload = try JWSTransactionDecodedPayload(object: object, path: "")
                    return (payload, try VerifiedSignedTransaction.Fields(payload, path: ""))
                },
                signingTime: { decoded in (decoded.1.signedDate, .signedDate) },
                environment: { decoded in decoded.0.environment }
            )
            nested.transaction = VerifiedSignedTransaction(payload: transaction, details: details, fields: fields, rawJWS: bytes)
        }
        if let signed = payload.data?.signedRenewalInfo {
            let ((renewalInfo, fields), details, bytes) = try await verifyNestedJWS(
                signed, field: "data.signedRenewalInfo", kind: .signedRenewalInfo, environmentField: "environment",
                decode: { object throws(SignedDataError) in
                    let payload = try JWSRenewalInfoDecodedPayload(object: object, path: "")
                    return (payload, try VerifiedSignedRenewalInfo.Fields(payload, path: ""))
                },
                signingTime: { decoded in (decoded.1.signedDate, .signedDate) },
                environment: { decoded in decoded.0.environment }
            )
            nested.renewalInfo = VerifiedSignedRenewalInfo(payload: renewalInfo, details: details, fields: fields, rawJWS: bytes)
        }
        if let signed = payload.appData?.signedAppTransactionInfo {
            let clock = self.clock
            let ((appTransaction, bundleId), details, bytes) = try await verifyNestedJWS(
                signed, field: "appData.signedAppTransactionInfo", kind: .appTransaction, environmentField: "receiptType",
                decode: { object throws(SignedDataError) in
                    let payload = try AppTransaction(object: object, path: "")
                    return (payload, try Self.required(payload.bundleId, "bundleId"))
                },
                signingTime: { decoded in Self.signingTime(of: decoded.0, clock: clock) },
                environment: { decoded in decoded.0.receiptType }
            )
            nested.appTransaction = VerifiedSignedAppTransaction(payload: appTransaction, details: details, bundleId: bundleId, rawJWS: bytes)
        }
        return nested
    }

    /// One nested JWS: structure, signature and payload, then its chain at its own signing
    /// time, and the environment it claims; any failure is reported inside `field`.
    private func verifyNestedJWS<Payload>(
        _ text: String,
        field: String,
        kind: ProofKind,
        environmentField: String,
        decode: (JSONObject) throws(SignedDataError) -> Payload,
        signingTime: (Payload) throws(SignedDataError) -> (Date, SignedDataDetails.SigningTimeSource),
        environment: (Payload) -> AppStoreEnvironment?
    ) async throws(SignedDataError) -> (Payload, SignedDataDetails, [UInt8]) {
        do throws(SignedDataError) {
            let bytes = Array(text.utf8)
            let (jws, signed, payload) = try open(bytes, decode: decode)
            let (time, source) = try signingTime(payload)
            let authentication = try await validateChain(jws, signed, signingTime: time)
            let claimed = try Self.nestedEnvironment(environment(payload), authentication, field: environmentField)
            return (payload, details(kind, jws, claimed, authentication, time, source), bytes)
        } catch {
            throw error.nested(in: field)
        }
    }

    private static func nestedEnvironment(
        _ claimed: AppStoreEnvironment?,
        _ authentication: Authentication,
        field: String
    ) throws(SignedDataError) -> (claimed: AppStoreEnvironment, reported: AppStoreEnvironment) {
        guard let claimed else {
            throw SignedDataError(.nestedMismatch, field: field, reason: "the nested payload names no environment")
        }
        return (claimed, authentication.signer.reportedEnvironment(claimed: claimed))
    }
}

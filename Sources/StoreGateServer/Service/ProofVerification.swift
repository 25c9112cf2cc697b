import Foundation
import StoreGateAppStoreClient
import StoreGateConsole
import StoreGateCore
import StoreGateReceipt
import StoreGateSignedData
import HTTPTypes

/// The service's verifiers, built once from the configuration and shared by every request:
/// one chain verifier (one chain cache), one receipt verifier, one signed-data verifier per
/// accepted app.
///
/// A proof is checked against the accepted app it names. With one accepted app that app is
/// the expectation; with several, the proof's (still unverified) bundle id picks the app, and
/// a bundle id that is not accepted is checked against the first app, so the reply names the
/// first step that fails (signature, chain, …) before the bundle id. With none, every proof
/// is refused with `bundle_id_not_accepted`.
struct ProofVerification: Sendable {
    /// What a verify request may add to the configured expectations.
    struct ReceiptRequest: Sendable {
        var appVersion: String?
        var device: DeviceIdentifier?
        var productId: String?
        var transactionId: String?
        /// Overrides the configured environments (the `/verifyReceipt` drop-in maps a
        /// refused environment to Apple's own status codes).
        var environments: Set<AppStoreEnvironment>?
        /// Refuse a receipt whose own expiration date passed (Apple's verifyReceipt does not).
        var rejectsExpiredReceipt = true
    }

    let chainVerifier: CertificateChainVerifier
    let receiptVerifier: ReceiptVerifier
    let apps: [ServerConfiguration.App]
    let environments: Set<AppStoreEnvironment>
    private let signedData: [String: SignedDataVerifier]

    init(configuration: ServerConfiguration, now: @escaping @Sendable () -> Date) {
        let chainVerifier = CertificateChainVerifier(trustStore: configuration.trustStore)
        self.chainVerifier = chainVerifier
        self.receiptVerifier = ReceiptVerifier(chainVerifier: chainVerifier, limits: configuration.limits, now: now)
        self.apps = configuration.apps
        self.environments = configuration.environments
        var signedData: [String: SignedDataVerifier] = [:]
        for app in configuration.apps {
            signedData[app.bundleId] = SignedDataVerifier(
                expectations: SignedDataExpectations(bundleId: app.bundleId, environments: configuration.environments, appAppleId: app.appAppleId),
                chainVerifier: chainVerifier,
                limits: configuration.limits,
                clock: now
            )
        }
        self.signedData = signedData
    }

    /// The webhook's own notification verifier for `bundleId`, for answers of the App Store
    /// Server API in `environment` (every payload must claim that environment).
    func payloadVerifier(bundleId: String, environment: AppStoreEnvironment) -> SignedDataPayloadVerifier? {
        signedData[bundleId].map { SignedDataPayloadVerifier($0, claimedEnvironment: environment) }
    }

    // MARK: App receipts

    /// Verifies a base64 app receipt against the accepted app it names and the request's
    /// expectations, the app's accepted versions among them.
    func verifyReceipt(base64: String, _ request: ReceiptRequest) async throws(APIError) -> VerifiedReceipt {
        try await Traces.span(Traces.receiptVerification) { _ throws(APIError) in
            try await verifyReceiptUntraced(base64: base64, request)
        }
    }

    private func verifyReceiptUntraced(base64: String, _ request: ReceiptRequest) async throws(APIError) -> VerifiedReceipt {
        let der: [UInt8]
        do {
            der = try UnverifiedReceipt.der(base64: base64, limits: receiptVerifier.limits)
        } catch {
            throw Self.apiError(error)
        }
        let app = try appForReceipt(der)
        let verified: VerifiedReceipt
        do throws(ReceiptError) {
            verified = try await receiptVerifier.verify(der, expecting: receiptExpectations(app, request))
        } catch {
            throw Self.apiError(error)
        }
        return verified
    }

    /// The configured expectations of `app`, with what the request adds.
    private func receiptExpectations(_ app: ServerConfiguration.App, _ request: ReceiptRequest) -> ReceiptExpectations {
        var expectations = ReceiptExpectations(
            bundleId: app.bundleId,
            appVersion: request.appVersion,
            device: request.device,
            environments: request.environments ?? environments,
            rejectsExpiredReceipt: request.rejectsExpiredReceipt,
            productId: request.productId,
            transactionId: request.transactionId
        )
        expectations.acceptedAppVersions = app.appVersions
        return expectations
    }

    private func appForReceipt(_ der: [UInt8]) throws(APIError) -> ServerConfiguration.App {
        guard let first = apps.first else { throw Self.noApp }
        guard apps.count > 1 else { return first }
        do {
            let named = try UnverifiedReceipt(der: der, limits: receiptVerifier.limits).receipt.bundleId
            return apps.first { $0.bundleId == named } ?? first
        } catch {
            return first
        }
    }

    static func apiError(_ error: ReceiptError) -> APIError {
        APIError(.unprocessableContent, APIErrorCode(error.code), error.reason, field: error.field, step: error.step.rawValue)
    }

    // MARK: Signed data

    /// Verifies a signed transaction (and the renewal info sent with it) against the accepted
    /// app it names and, when given, the product and transaction the request expects.
    func verifyTransaction(
        _ jws: String, renewalInfo: String? = nil, productId: String? = nil, transactionId: String? = nil
    ) async throws(APIError) -> VerifiedSignedTransaction {
        try await Traces.span(Traces.transactionVerification) { _ throws(APIError) in
            try await verifyTransactionUntraced(jws, renewalInfo: renewalInfo, productId: productId, transactionId: transactionId)
        }
    }

    private func verifyTransactionUntraced(
        _ jws: String, renewalInfo: String?, productId: String?, transactionId: String?
    ) async throws(APIError) -> VerifiedSignedTransaction {
        let verifier = try verifier(for: jws) { payload in
            if case .transaction(let transaction) = payload { return transaction.bundleId }
            return nil
        }
        var expectations = verifier.expectations
        expectations.productId = productId
        expectations.transactionId = transactionId
        do throws(SignedDataError) {
            return try await verifier.verifyTransaction(jws, renewalInfo: renewalInfo, expecting: expectations)
        } catch {
            throw Self.apiError(error)
        }
    }

    /// Verifies a notification `signedPayload` against the accepted app it names.
    func verifyNotification(_ jws: String) async throws(APIError) -> VerifiedSignedNotification {
        try await Traces.span(Traces.notificationVerification) { _ throws(APIError) in
            try await verifyNotificationUntraced(jws)
        }
    }

    private func verifyNotificationUntraced(_ jws: String) async throws(APIError) -> VerifiedSignedNotification {
        let verifier = try verifier(for: jws) { payload in
            if case .notification(let notification) = payload { return notification.subject.bundleId }
            return nil
        }
        do throws(SignedDataError) {
            return try await verifier.verifyNotification(jws)
        } catch {
            throw Self.apiError(error)
        }
    }

    private func verifier(for jws: String, bundleId: (UnverifiedSignedData.Payload) -> String?) throws(APIError) -> SignedDataVerifier {
        guard let first = apps.first, let firstVerifier = signedData[first.bundleId] else { throw Self.noApp }
        guard apps.count > 1 else { return firstVerifier }
        do {
            let unverified = try UnverifiedSignedData(jws, limits: receiptVerifier.limits)
            return bundleId(unverified.payload).flatMap { signedData[$0] } ?? firstVerifier
        } catch {
            return firstVerifier
        }
    }

    static func apiError(_ error: SignedDataError) -> APIError {
        APIError(.unprocessableContent, APIErrorCode(error.code), error.reason, field: error.field, step: error.step.rawValue)
    }

    // MARK: The console's inspector

    /// Inspects a pasted proof: a compact JWS (three dot-separated parts; its kind read from
    /// the payload) or a base64 app receipt, against the accepted app it names.
    func inspect(_ text: String) async -> ProofInspection {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        if trimmed.contains(".") {
            let bytes = Array(trimmed.utf8)
            let verifier: SignedDataVerifier
            do throws(APIError) {
                verifier = try self.verifier(for: trimmed) { payload in
                    switch payload {
                    case .transaction(let transaction): return transaction.bundleId
                    case .appTransaction(let transaction): return transaction.bundleId
                    case .notification(let notification): return notification.subject.bundleId
                    case .renewalInfo: return nil
                    }
                }
            } catch {
                return .unreadable(step: error.step ?? VerificationStep.expectations.rawValue, code: error.code.rawValue, reason: error.message)
            }
            return .signedData(await verifier.report(bytes: bytes, as: UnverifiedSignedData.detectedKind(bytes)))
        }
        let der: [UInt8]
        do throws(ReceiptError) {
            der = try UnverifiedReceipt.der(base64: trimmed, limits: receiptVerifier.limits)
        } catch {
            return .unreadable(step: error.step.rawValue, code: error.code.description, reason: error.reason)
        }
        guard let app = try? appForReceipt(der) else {
            return .unreadable(step: Self.noApp.step ?? "", code: Self.noApp.code.rawValue, reason: Self.noApp.message)
        }
        return .receipt(await receiptVerifier.report(der, expecting: receiptExpectations(app, ReceiptRequest())))
    }

    static let noApp = APIError(
        .unprocessableContent, .bundleIdNotAccepted,
        "no app is configured: set STOREGATE_BUNDLE_IDS to the bundle ids whose proofs this service accepts",
        step: VerificationStep.expectations.rawValue
    )
}

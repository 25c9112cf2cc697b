import Crypto
public import Foundation
public import StoreGateCore

/// Verifies StoreKit 2 signed data offline: signed transactions, renewal infos, app
/// transactions and App Store Server Notifications V2 (with their nested signed data).
///
/// Each JWS goes through the same steps, in the order of `VerificationStep`,
/// each failing with its own ``SignedDataError``:
/// 1. **input**: not empty, at most `Limits.maxJWSBytes`;
/// 2. **structure**: three strict base64url parts; a header with `alg` exactly `ES256` and
///    an `x5c` of three certificates, or of one (which the chain step accepts only as an
///    enabled opt-in anchor: Xcode's StoreKit Testing certificate);
/// 3. **signature**: ECDSA P-256 over `header.payload`, raw 64-byte `r‖s`, with the key of
///    `x5c[0]`; always checked, also for Xcode data, which Apple's own libraries do not check;
/// 4. **payload**: the JSON decoded into Apple's model, which dates the signature (`signedDate`);
/// 5. **chain**: leaf → intermediate → root, the root in `x5c` being, by fingerprint, the
///    pinned Apple Root CA - G3 or an enabled opt-in anchor; Apple's marker OIDs; listed in
///    that order; every certificate valid at `signedDate` (or at the time
///    ``ValidationTime`` names). Results are cached by the raw `x5c` strings, so a warm
///    verification neither decodes nor parses a certificate;
/// 6. **expectations**: the checks ``SignedDataExpectations`` composes (bundle id,
///    environment, `appAppleId`, maximum age, a notification's nested data, product,
///    transaction, then the caller's own), run in order over the ``SignedDataClaims`` each
///    kind's payload makes; the first failure is the verdict.
///
/// The chain cache lives in the shared `CertificateChainVerifier`; the verifier
/// itself keeps only a memo of the JWS headers whose signature and chain held (a warm
/// verification reads its 5 KB header once per chain, not once per JWS), so one verifier
/// serves any number of tasks.
public struct SignedDataVerifier: Sendable {
    /// The time certificates are checked at.
    public enum ValidationTime: Sendable, Hashable {
        /// When the payload says it was signed (`signedDate`): the default, because Apple's
        /// signing certificates expire long before old transactions stop mattering.
        case signingTime
        /// The verifier's clock: every real Apple JWS older than its leaf certificate fails.
        case now
        /// A fixed time.
        case fixed(Date)
    }

    /// The chain verifier (trust store and chain cache).
    public let chainVerifier: CertificateChainVerifier
    /// What verified data must satisfy unless a call passes its own (`expecting:`).
    public var expectations: SignedDataExpectations
    /// Size limits of the input.
    public var limits: Limits
    /// The time certificates are checked at.
    public var validationTime: ValidationTime
    let clock: @Sendable () -> Date
    /// The headers of JWS whose signature and chain held, shared by this verifier's copies.
    let headerMemo = JWSHeaderMemo()

    /// Creates a verifier.
    ///
    /// - Parameters:
    ///   - expectations: What verified data must satisfy.
    ///   - chainVerifier: Trust store and chain cache; share one across verifiers.
    ///   - limits: Size limits of the input.
    ///   - validationTime: The time certificates are checked at.
    ///   - clock: The current time, for ``ValidationTime/now``, maximum ages and undated payloads.
    public init(
        expectations: SignedDataExpectations,
        chainVerifier: CertificateChainVerifier = CertificateChainVerifier(),
        limits: Limits = .default,
        validationTime: ValidationTime = .signingTime,
        clock: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.expectations = expectations
        self.chainVerifier = chainVerifier
        self.limits = limits
        self.validationTime = validationTime
        self.clock = clock
    }

    // MARK: - Signed transactions

    /// Verifies a signed transaction (`signedTransactionInfo`, StoreKit 2 `Transaction.jwsRepresentation`).
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed.
    public func verifyTransaction(
        _ jws: some StringProtocol, expecting expectations: SignedDataExpectations? = nil
    ) async throws(SignedDataError) -> VerifiedSignedTransaction {
        try await expecting(expectations).verifyTransaction(bytes: Array(jws.utf8), trace: nil)
    }

    /// Verifies a signed transaction given as bytes.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed.
    public func verifyTransaction(bytes: [UInt8]) async throws(SignedDataError) -> VerifiedSignedTransaction {
        try await verifyTransaction(bytes: bytes, trace: nil)
    }

    /// Verifies a signed transaction and the renewal info sent with it: both verified on their
    /// own, and the renewal info must be for the same subscription (`originalTransactionId`)
    /// in the same environment. Its failures name `signedRenewalInfo.…` fields.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed;
    ///   ``SignedDataError/Code/renewalInfoMismatch`` when the two do not belong together.
    public func verifyTransaction(
        _ jws: some StringProtocol, renewalInfo: (some StringProtocol)?, expecting expectations: SignedDataExpectations? = nil
    ) async throws(SignedDataError) -> VerifiedSignedTransaction {
        guard expectations == nil else {
            return try await expecting(expectations).verifyTransaction(jws, renewalInfo: renewalInfo)
        }
        let transaction = try await verifyTransaction(bytes: Array(jws.utf8), trace: nil)
        guard let renewalInfo else { return transaction }
        let renewal: VerifiedSignedRenewalInfo
        do throws(SignedDataError) {
            var renewalVerifier = self
            renewalVerifier.expectations.transactionId = nil  // a renewal info names no transaction
            renewal = try await renewalVerifier.verifyRenewalInfo(bytes: Array(renewalInfo.utf8), trace: nil)
        } catch {
            throw error.nested(in: "signedRenewalInfo")
        }
        guard renewal.renewalInfo.originalTransactionId == transaction.transaction.originalTransactionId,
              renewal.environment == transaction.environment
        else {
            throw SignedDataError(
                .renewalInfoMismatch, field: "signedRenewalInfo.originalTransactionId",
                reason: "the renewal info is for another subscription or environment than the transaction")
        }
        return transaction.with(renewal)
    }

    func verifyTransaction(bytes: [UInt8], trace: Trace?) async throws(SignedDataError) -> VerifiedSignedTransaction {
        let (jws, signed, payload) = try open(bytes) { object throws(SignedDataError) in
            try JWSTransactionDecodedPayload(object: object, path: "")
        }
        let fields = try VerifiedSignedTransaction.Fields(payload, path: "")
        let signedDate = fields.signedDate
        let authentication = try await validateChain(jws, signed, signingTime: signedDate)
        trace?.record(authentication, signingTime: signedDate, source: .signedDate)
        let claims = SignedDataClaims(
            kind: .signedTransaction, bundleId: payload.bundleId, claimedEnvironment: payload.environment, signer: authentication.signer,
            signedDate: signedDate, signingTimeSource: .signedDate,
            productIds: [fields.productId], transactionId: fields.transactionId, fields: .payload, clock: clock)
        try expect(claims, trace: trace)
        let environment = try claims.environments()
        return VerifiedSignedTransaction(
            payload: payload,
            details: details(.signedTransaction, jws, environment, authentication, signedDate, .signedDate),
            fields: fields,
            rawJWS: bytes
        )
    }

    // MARK: - Signed renewal infos

    /// Verifies a signed renewal info (`signedRenewalInfo`). A renewal info names no bundle
    /// id, so only the environment and age expectations apply.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed.
    public func verifyRenewalInfo(
        _ jws: some StringProtocol, expecting expectations: SignedDataExpectations? = nil
    ) async throws(SignedDataError) -> VerifiedSignedRenewalInfo {
        try await expecting(expectations).verifyRenewalInfo(bytes: Array(jws.utf8), trace: nil)
    }

    /// Verifies a signed renewal info given as bytes.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed.
    public func verifyRenewalInfo(bytes: [UInt8]) async throws(SignedDataError) -> VerifiedSignedRenewalInfo {
        try await verifyRenewalInfo(bytes: bytes, trace: nil)
    }

    func verifyRenewalInfo(bytes: [UInt8], trace: Trace?) async throws(SignedDataError) -> VerifiedSignedRenewalInfo {
        let (jws, signed, payload) = try open(bytes) { object throws(SignedDataError) in
            try JWSRenewalInfoDecodedPayload(object: object, path: "")
        }
        let fields = try VerifiedSignedRenewalInfo.Fields(payload, path: "")
        let signedDate = fields.signedDate
        let authentication = try await validateChain(jws, signed, signingTime: signedDate)
        trace?.record(authentication, signingTime: signedDate, source: .signedDate)
        let claims = SignedDataClaims(
            kind: .signedRenewalInfo, bundleId: nil, claimedEnvironment: payload.environment, signer: authentication.signer,
            signedDate: signedDate, signingTimeSource: .signedDate,
            productIds: [fields.productId, payload.autoRenewProductId].compactMap { $0 }, transactionId: nil,
            fields: .payload, clock: clock)
        try expect(claims, trace: trace)
        let environment = try claims.environments()
        return VerifiedSignedRenewalInfo(
            payload: payload,
            details: details(.signedRenewalInfo, jws, environment, authentication, signedDate, .signedDate),
            fields: fields,
            rawJWS: bytes
        )
    }

    // MARK: - Signed app transactions

    /// Verifies a signed app transaction (StoreKit 2 `AppTransaction.jwsRepresentation`).
    ///
    /// It is dated by `signedDate`, or `receiptCreationDate` when that is absent (Xcode), as
    /// Apple's libraries do. Its environment is `receiptType`; a production app transaction
    /// must carry the expected `appAppleId`.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed.
    public func verifyAppTransaction(
        _ jws: some StringProtocol, expecting expectations: SignedDataExpectations? = nil
    ) async throws(SignedDataError) -> VerifiedSignedAppTransaction {
        try await expecting(expectations).verifyAppTransaction(bytes: Array(jws.utf8), trace: nil)
    }

    /// Verifies a signed app transaction given as bytes.
    ///
    /// - Throws: ``SignedDataError`` naming the step that failed.
    public func verifyAppTransaction(bytes: [UInt8]) async throws(SignedDataError) -> VerifiedSignedAppTransaction {
        try await verifyAppTransaction(bytes: bytes, trace: nil)
    }

    func verifyAppTransaction(bytes: [UInt8], trace: Trace?) async throws(SignedDataError) -> VerifiedSignedAppTransaction {
        let (jws, signed, payload) = try open(bytes) { object throws(SignedDataError) in
            try AppTransaction(object: object, path: "")
        }
        let bundleId = try Self.required(payload.bundleId, "bundleId")
        let (signingTime, source) = Self.signingTime(of: payload, clock: clock)
        let authentication = try await validateChain(jws, signed, signingTime: signingTime)
        trace?.record(authentication, signingTime: signingTime, source: source)
        let claims = SignedDataClaims(
            kind: .appTransaction, bundleId: bundleId, claimedEnvironment: payload.receiptType, signer: authentication.signer,
            appAppleId: payload.appAppleId, signedDate: source == .clock ? nil : signingTime, signingTimeSource: source,
            productIds: [], transactionId: nil, fields: .appTransaction, clock: clock)
        try expect(claims, trace: trace)
        let environment = try claims.environments()
        return VerifiedSignedAppTransaction(
            payload: payload,
            details: details(.appTransaction, jws, environment, authentication, signingTime, source),
            bundleId: bundleId,
            rawJWS: bytes
        )
    }

    static func signingTime(of payload: AppTransaction, clock: () -> Date) -> (Date, SignedDataDetails.SigningTimeSource) {
        if let signedDate = payload.signedDate {
            return (signedDate, .signedDate)
        }
        if let created = payload.receiptCreationDate {
            return (created, .receiptCreationDate)
        }
        return (clock(), .clock)
    }
}

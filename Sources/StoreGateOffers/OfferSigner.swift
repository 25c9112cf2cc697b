import Crypto
public import Foundation
import StoreGateCore

/// Signs subscription offers the way Apple's App Store Server Library does: the StoreKit 1
/// promotional offer signature, and the StoreKit 2 JWS signatures (promotional offer V2,
/// introductory offer eligibility, Advanced Commerce in-app request).
///
/// Every signature is ECDSA P-256 with SHA-256 under the ``OfferSigningKey``:
/// - StoreKit 1: over the UTF-8 of `bundleId ⁣ keyId ⁣ productId ⁣ offerIdentifier ⁣
///   lowercase(applicationUsername) ⁣ lowercase(nonce) ⁣ timestamp`, the parts joined by
///   U+2063 (INVISIBLE SEPARATOR), DER-encoded and base64 (Apple's
///   `PromotionalOfferSignatureCreator`);
/// - StoreKit 2: a compact JWS with header `{"alg":"ES256","kid":keyId,"typ":"JWT"}` and claims
///   `bid`, `iss`, `aud`, `iat` (UNIX seconds), `nonce` (a fresh lower-case UUID) and the
///   kind's own claims, signed `r‖s` (Apple's `JWSSignatureCreator`).
///
/// The clock and the nonce source are injected, so tests pin them.
public struct OfferSigner: Sendable {
    /// The U+2063 INVISIBLE SEPARATOR between the parts of a StoreKit 1 signature's payload.
    public static let separator = "\u{2063}"

    /// The `aud` of each StoreKit 2 signature kind, as Apple's creators set it.
    public enum Audience: String, Sendable, CaseIterable {
        /// `PromotionalOfferV2SignatureCreator`.
        case promotionalOffer = "promotional-offer"
        /// `IntroductoryOfferEligibilitySignatureCreator`.
        case introductoryOfferEligibility = "introductory-offer-eligibility"
        /// `AdvancedCommerceAPIInAppSignatureCreator`.
        case advancedCommerce = "advanced-commerce-api"
    }

    /// The key signatures are made with.
    public let key: OfferSigningKey
    /// The app's bundle id (`bid`, and the first part of a StoreKit 1 payload).
    public let bundleId: String
    private let now: @Sendable () -> Date
    private let makeNonce: @Sendable () -> UUID

    /// Creates a signer.
    ///
    /// - Parameters:
    ///   - key: The offer key (with its issuer id for StoreKit 2 signatures).
    ///   - bundleId: The app's bundle id.
    ///   - now: The clock (the StoreKit 1 `timestamp`, the JWS `iat`).
    ///   - nonce: The source of nonces (fresh random UUIDs by default).
    /// - Throws: ``OfferSigningError/Code/invalidRequest`` when `bundleId` is empty.
    public init(
        key: OfferSigningKey,
        bundleId: String,
        now: @escaping @Sendable () -> Date = { Date() },
        nonce: @escaping @Sendable () -> UUID = { UUID() }
    ) throws(OfferSigningError) {
        guard !bundleId.isEmpty else { throw OfferSigningError(.invalidRequest, field: "bundleId", reason: "the bundle id is empty") }
        self.key = key
        self.bundleId = bundleId
        self.now = now
        self.makeNonce = nonce
    }

    // MARK: StoreKit 1

    /// The exact text a StoreKit 1 promotional offer signature covers.
    public static func promotionalOfferV1Payload(
        bundleId: String, keyId: String, productId: String, offerIdentifier: String, applicationUsername: String, nonce: UUID, timestamp: Int64
    ) -> String {
        [bundleId, keyId, productId, offerIdentifier, applicationUsername.lowercased(), nonce.uuidString.lowercased(), String(timestamp)]
            .joined(separator: separator)
    }

    /// Signs a StoreKit 1 promotional offer (`SKPaymentDiscount`).
    ///
    /// - Parameters:
    ///   - productId: The subscription's product id.
    ///   - offerIdentifier: The promotional offer's identifier in App Store Connect.
    ///   - applicationUsername: What the app sets as `SKMutablePayment.applicationUsername`
    ///     (usually the app account token); empty for none. Signed lower-cased, as Apple does.
    ///   - nonce: The nonce; a fresh one when `nil`.
    ///   - timestamp: UNIX milliseconds; the clock's when `nil`.
    /// - Throws: ``OfferSigningError/Code/invalidRequest`` for an empty product id or offer
    ///   identifier; ``OfferSigningError/Code/signingFailed`` when the key cannot sign.
    public func promotionalOfferV1(
        productId: String, offerIdentifier: String, applicationUsername: String = "", nonce: UUID? = nil, timestamp: Int64? = nil
    ) throws(OfferSigningError) -> PromotionalOfferSignatureV1 {
        try Self.require(productId, "productId")
        try Self.require(offerIdentifier, "offerIdentifier")
        let nonce = nonce ?? makeNonce()
        let timestamp = timestamp ?? Int64((now().timeIntervalSince1970 * 1000).rounded(.down))
        let payload = Self.promotionalOfferV1Payload(
            bundleId: bundleId, keyId: key.keyId, productId: productId, offerIdentifier: offerIdentifier,
            applicationUsername: applicationUsername, nonce: nonce, timestamp: timestamp
        )
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try key.privateKey.signature(for: Array(payload.utf8))
        } catch {
            throw OfferSigningError(.signingFailed, reason: "the key could not sign the promotional offer")
        }
        return PromotionalOfferSignatureV1(
            encodedSignature: Base64.encode(signature.derRepresentation),
            productId: productId,
            offerIdentifier: offerIdentifier,
            keyId: key.keyId,
            nonce: nonce,
            timestamp: timestamp,
            applicationUsername: applicationUsername.lowercased()
        )
    }

    // MARK: StoreKit 2

    /// Signs a promotional offer for StoreKit 2 (`Product.PurchaseOption.promotionalOffer(_:compactJWS:)`):
    /// claims `productId`, `offerIdentifier` and, when given, `transactionId`.
    ///
    /// - Parameter transactionId: Any transaction id of the customer (their `appTransactionId`
    ///   works before any purchase); optional, and Apple recommends it.
    public func promotionalOfferV2(productId: String, offerIdentifier: String, transactionId: String? = nil) throws(OfferSigningError) -> String {
        try Self.require(productId, "productId")
        try Self.require(offerIdentifier, "offerIdentifier")
        if let transactionId { try Self.require(transactionId, "transactionId") }
        return try jws(audience: .promotionalOffer) { claims in
            claims.member("productId", productId)
            claims.member("offerIdentifier", offerIdentifier)
            if let transactionId { claims.member("transactionId", transactionId) }
        }
    }

    /// Signs an introductory offer eligibility decision for StoreKit 2
    /// (`Product.PurchaseOption.introductoryOfferEligibility(compactJWS:)`): claims
    /// `productId`, `allowIntroductoryOffer` and `transactionId`.
    public func introductoryOfferEligibility(productId: String, allowIntroductoryOffer: Bool, transactionId: String) throws(OfferSigningError) -> String {
        try Self.require(productId, "productId")
        try Self.require(transactionId, "transactionId")
        return try jws(audience: .introductoryOfferEligibility) { claims in
            claims.member("productId", productId)
            claims.member("allowIntroductoryOffer", allowIntroductoryOffer)
            claims.member("transactionId", transactionId)
        }
    }

    /// Signs an Advanced Commerce API in-app request: claim `request`, the request's JSON
    /// bytes as given, in standard base64 (Apple's creator base64-encodes the JSON it writes).
    ///
    /// - Parameter request: The request (such as a `SubscriptionCreateRequest`) as a JSON object.
    /// - Throws: ``OfferSigningError/Code/invalidRequest`` when `request` is not one JSON object.
    public func advancedCommerceInAppRequest(_ request: [UInt8]) throws(OfferSigningError) -> String {
        if case .failure(let failure) = JSONReader.readObject(request) {
            throw OfferSigningError(.invalidRequest, field: "request", reason: "not one JSON object: \(failure.reason)")
        }
        let encoded = Base64.encode(request)
        return try jws(audience: .advancedCommerce) { claims in
            claims.member("request", encoded)
        }
    }

    /// A compact JWS over the kind's claims followed by Apple's common ones.
    private func jws(audience: Audience, _ featureClaims: (inout JSONWriter) -> Void) throws(OfferSigningError) -> String {
        guard let issuerId = key.issuerId else {
            throw OfferSigningError(.invalidKey, field: "issuerId", reason: "StoreKit 2 signatures need the team's issuer id (STOREGATE_APPSTORE_ISSUER_ID)")
        }
        var header = JSONWriter(capacity: 96)
        header.object { header in
            header.member("alg", "ES256")
            header.member("kid", key.keyId)
            header.member("typ", "JWT")
        }
        let iat = Int64(now().timeIntervalSince1970.rounded(.down))
        let nonce = makeNonce().uuidString.lowercased()
        var claims = JSONWriter(capacity: 256)
        claims.object { claims in
            featureClaims(&claims)
            claims.member("bid", bundleId)
            claims.member("iss", issuerId)
            claims.member("aud", audience.rawValue)
            claims.member("iat", iat)
            claims.member("nonce", nonce)
        }
        let signingInput = Base64.encode(header.bytes, url: true) + "." + Base64.encode(claims.bytes, url: true)
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try key.privateKey.signature(for: Array(signingInput.utf8))
        } catch {
            throw OfferSigningError(.signingFailed, reason: "the key could not sign the JWS")
        }
        return signingInput + "." + Base64.encode(signature.rawRepresentation, url: true)
    }

    private static func require(_ value: String, _ field: String) throws(OfferSigningError) {
        guard !value.isEmpty else { throw OfferSigningError(.invalidRequest, field: field, reason: "\(field) is empty") }
        guard value.utf8.count <= 1024 else { throw OfferSigningError(.invalidRequest, field: field, reason: "\(field) is longer than 1024 bytes") }
    }
}

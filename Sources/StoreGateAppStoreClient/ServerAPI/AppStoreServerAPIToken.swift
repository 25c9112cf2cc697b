import Crypto
public import Foundation
import StoreGateCore

/// A JSON Web Token for the App Store Server API.
///
/// Header `{"alg":"ES256","kid":…,"typ":"JWT"}`; claims `iss` (issuer id), `iat`, `exp` (at
/// most 60 minutes after `iat`, as Apple requires), `aud` `appstoreconnect-v1` and `bid`
/// (bundle id); signed with ES256 (raw `r‖s` signature, base64url).
public struct AppStoreServerAPIToken: Sendable, Hashable, CustomStringConvertible {
    /// The audience Apple requires.
    public static let audience = "appstoreconnect-v1"
    /// The longest lifetime Apple accepts.
    public static let maximumLifetime: Duration = .seconds(3600)

    /// The compact JWT, for the `Authorization: Bearer` header. Never logged.
    public let compact: String
    /// The `iat` claim.
    public let issuedAt: Date
    /// The `exp` claim.
    public let expiresAt: Date

    /// Signs a token.
    ///
    /// - Parameters:
    ///   - credentials: Key, key id, issuer and bundle id.
    ///   - issuedAt: The `iat` claim (whole seconds).
    ///   - lifetime: How long the token is valid; clamped to 60 minutes.
    public init(credentials: AppStoreServerAPICredentials, issuedAt: Date, lifetime: Duration) throws(AppStoreClientError) {
        let lifetime = min(lifetime, Self.maximumLifetime)
        let iat = Int64(issuedAt.timeIntervalSince1970.rounded(.down))
        let exp = iat + max(1, lifetime.components.seconds)
        try self.init(credentials: credentials, iat: iat, exp: exp, audience: Self.audience)
    }

    /// Signs a token with any claims, including ones Apple would refuse; for testing a stand-in.
    package init(credentials: AppStoreServerAPICredentials, iat: Int64, exp: Int64, audience: String, bundleId: String? = nil, keyId: String? = nil) throws(AppStoreClientError) {
        let header = "{\"alg\":\"ES256\",\"kid\":" + JSONString.quote(keyId ?? credentials.keyId) + ",\"typ\":\"JWT\"}"
        let claims = "{\"iss\":" + JSONString.quote(credentials.issuerId)
            + ",\"iat\":\(iat),\"exp\":\(exp),\"aud\":" + JSONString.quote(audience)
            + ",\"bid\":" + JSONString.quote(bundleId ?? credentials.bundleId) + "}"
        let signingInput = Base64.encode(Array(header.utf8), url: true) + "." + Base64.encode(Array(claims.utf8), url: true)
        let signature: P256.Signing.ECDSASignature
        do {
            signature = try credentials.privateKey.signature(for: Array(signingInput.utf8))
        } catch {
            throw AppStoreClientError(.invalidConfiguration, reason: "the private key could not sign the token")
        }
        self.compact = signingInput + "." + Base64.encode(Array(signature.rawRepresentation), url: true)
        self.issuedAt = Date(timeIntervalSince1970: Double(iat))
        self.expiresAt = Date(timeIntervalSince1970: Double(exp))
    }

    public var description: String { "AppStoreServerAPIToken(issuedAt: \(issuedAt), expiresAt: \(expiresAt))" }
}

/// Hands out App Store Server API tokens, signing a new one only when the cached one is close
/// to expiry: one signature per lifetime, however many calls.
public actor AppStoreServerAPITokenProvider {
    /// The key and ids tokens are signed with.
    public let credentials: AppStoreServerAPICredentials
    /// How long each token lives (at most 60 minutes).
    public let lifetime: Duration
    /// How long before expiry a token is replaced.
    public let renewalMargin: Duration
    private let now: @Sendable () -> Date
    private var cached: AppStoreServerAPIToken?

    /// Creates a provider.
    ///
    /// - Parameters:
    ///   - credentials: The key and ids to sign with.
    ///   - lifetime: Each token's lifetime, clamped to 1–60 minutes (default 20).
    ///   - renewalMargin: Replace a token this long before it expires (default 2 minutes;
    ///     at most half the lifetime).
    ///   - now: The clock (injectable for tests).
    public init(
        credentials: AppStoreServerAPICredentials,
        lifetime: Duration = .seconds(1200),
        renewalMargin: Duration = .seconds(120),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        let lifetime = min(max(lifetime, .seconds(60)), AppStoreServerAPIToken.maximumLifetime)
        self.credentials = credentials
        self.lifetime = lifetime
        self.renewalMargin = min(max(.zero, renewalMargin), lifetime / 2)
        self.now = now
    }

    /// A token valid for at least ``renewalMargin`` more.
    public func token() throws(AppStoreClientError) -> AppStoreServerAPIToken {
        let current = now()
        let margin = Double(renewalMargin.components.seconds)
        if let cached, cached.expiresAt.timeIntervalSince(current) > margin, cached.issuedAt <= current.addingTimeInterval(60) {
            return cached
        }
        let fresh = try AppStoreServerAPIToken(credentials: credentials, issuedAt: current, lifetime: lifetime)
        cached = fresh
        return fresh
    }

    /// Forgets the cached token (after Apple refused it).
    public func invalidate() {
        cached = nil
    }
}

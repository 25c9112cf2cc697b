public import Crypto
import Foundation

/// What the App Store Server API authenticates: an In-App Purchase key (the `.p8` file, its
/// key id), the issuer id of the App Store Connect team, and the app's bundle id.
///
/// The private key never appears in a description.
public struct AppStoreServerAPICredentials: Sendable, CustomStringConvertible {
    /// The key id shown in App Store Connect (the JWT header's `kid`).
    public let keyId: String
    /// The issuer id of the team (the JWT's `iss`).
    public let issuerId: String
    /// The app's bundle id (the JWT's `bid`).
    public let bundleId: String
    /// The ES256 signing key.
    public let privateKey: P256.Signing.PrivateKey

    /// Creates credentials from a signing key.
    public init(keyId: String, issuerId: String, bundleId: String, privateKey: P256.Signing.PrivateKey) {
        self.keyId = keyId
        self.issuerId = issuerId
        self.bundleId = bundleId
        self.privateKey = privateKey
    }

    /// Creates credentials from the contents of the `.p8` file Apple issues (PKCS#8 PEM).
    ///
    /// - Throws: ``AppStoreClientError/Code/invalidConfiguration`` when a value is empty or the
    ///   key is not a P-256 private key in PEM.
    public init(keyId: String, issuerId: String, bundleId: String, privateKeyPEM: String) throws(AppStoreClientError) {
        for (name, value) in [("key id", keyId), ("issuer id", issuerId), ("bundle id", bundleId)] where value.isEmpty {
            throw AppStoreClientError(.invalidConfiguration, reason: "the \(name) is empty")
        }
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw AppStoreClientError(.invalidConfiguration, reason: "the private key is not a P-256 key in PEM (.p8)")
        }
        self.init(keyId: keyId, issuerId: issuerId, bundleId: bundleId, privateKey: key)
    }

    public var description: String {
        "AppStoreServerAPICredentials(keyId: \(keyId), issuerId: \(issuerId), bundleId: \(bundleId), privateKey: <redacted>)"
    }
}

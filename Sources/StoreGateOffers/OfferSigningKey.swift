public import Crypto
import Foundation

/// The key offers are signed with: an In-App Purchase key (a subscription offer key) from
/// App Store Connect, its key id, and — for the StoreKit 2 JWS signatures — the team's issuer id.
///
/// The private key never appears in a description, a log line or an error. Read it from a
/// `.p8` file (``init(keyId:issuerId:privateKeyFile:)``) or from the environment
/// (``fromEnvironment(_:)``).
public struct OfferSigningKey: Sendable, CustomStringConvertible {
    /// The key id shown in App Store Connect (SK1's `keyIdentifier`, the JWS header's `kid`).
    public let keyId: String
    /// The issuer id of the team (the JWS `iss`); needed by the StoreKit 2 signatures only.
    public let issuerId: String?
    /// The ECDSA P-256 signing key.
    let privateKey: P256.Signing.PrivateKey

    /// Creates a key from its parts.
    ///
    /// - Throws: ``OfferSigningError/Code/invalidKey`` when `keyId` (or a given `issuerId`) is empty.
    public init(keyId: String, issuerId: String? = nil, privateKey: P256.Signing.PrivateKey) throws(OfferSigningError) {
        guard !keyId.isEmpty else { throw OfferSigningError(.invalidKey, field: "keyId", reason: "the key id is empty") }
        if let issuerId, issuerId.isEmpty {
            throw OfferSigningError(.invalidKey, field: "issuerId", reason: "the issuer id is empty")
        }
        self.keyId = keyId
        self.issuerId = issuerId
        self.privateKey = privateKey
    }

    /// Creates a key from the contents of the `.p8` file Apple issues (PKCS#8 PEM).
    ///
    /// - Throws: ``OfferSigningError/Code/invalidKey`` when the text is not a P-256 private key in PEM.
    public init(keyId: String, issuerId: String? = nil, privateKeyPEM: String) throws(OfferSigningError) {
        let key: P256.Signing.PrivateKey
        do {
            key = try P256.Signing.PrivateKey(pemRepresentation: privateKeyPEM)
        } catch {
            throw OfferSigningError(.invalidKey, reason: "the private key is not a P-256 key in PEM (.p8)")
        }
        try self.init(keyId: keyId, issuerId: issuerId, privateKey: key)
    }

    /// Reads the key from a `.p8` file.
    ///
    /// - Throws: ``OfferSigningError/Code/invalidKey`` when the file cannot be read or holds no
    ///   P-256 key (the error names the path, never the contents).
    public init(keyId: String, issuerId: String? = nil, privateKeyFile path: String) throws(OfferSigningError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw OfferSigningError(.invalidKey, reason: "\(path) cannot be read")
        }
        try self.init(keyId: keyId, issuerId: issuerId, privateKeyPEM: String(decoding: data, as: UTF8.self))
    }

    /// The environment variables ``fromEnvironment(_:)`` reads.
    public enum Variable: String, Sendable, CaseIterable {
        /// The offer key's id.
        case keyId = "STOREGATE_OFFER_KEY_ID"
        /// The offer key as PEM text.
        case privateKey = "STOREGATE_OFFER_PRIVATE_KEY"
        /// The path of the offer key's `.p8` file.
        case privateKeyFile = "STOREGATE_OFFER_PRIVATE_KEY_FILE"
        /// The Server API key's id, used when no offer key is named.
        case appStoreKeyId = "STOREGATE_APPSTORE_KEY_ID"
        /// The Server API key as PEM text, used when no offer key is named.
        case appStorePrivateKey = "STOREGATE_APPSTORE_PRIVATE_KEY"
        /// The Server API key's `.p8` file, used when no offer key is named.
        case appStorePrivateKeyFile = "STOREGATE_APPSTORE_PRIVATE_KEY_FILE"
        /// The team's issuer id.
        case issuerId = "STOREGATE_APPSTORE_ISSUER_ID"
    }

    /// The key the environment names: `STOREGATE_OFFER_KEY_ID` with `STOREGATE_OFFER_PRIVATE_KEY`
    /// (PEM text) or `STOREGATE_OFFER_PRIVATE_KEY_FILE` (a `.p8` path); when no offer key id is
    /// set, the App Store Server API key (`STOREGATE_APPSTORE_KEY_ID` with
    /// `STOREGATE_APPSTORE_PRIVATE_KEY` or `…_FILE`: since 2024 one In-App Purchase key serves
    /// both). `STOREGATE_APPSTORE_ISSUER_ID` gives the issuer id.
    ///
    /// - Returns: `nil` when neither key id is set.
    /// - Throws: ``OfferSigningError/Code/missingKey`` when a key id is set without its key;
    ///   ``OfferSigningError/Code/invalidKey`` when the key is unusable.
    public static func fromEnvironment(_ environment: [String: String]) throws(OfferSigningError) -> OfferSigningKey? {
        func value(_ variable: Variable) -> String? {
            guard let text = environment[variable.rawValue], !text.isEmpty else { return nil }
            return text
        }
        let issuerId = value(.issuerId)
        let names: (id: Variable, inline: Variable, file: Variable)
        if value(.keyId) != nil {
            names = (.keyId, .privateKey, .privateKeyFile)
        } else if value(.appStoreKeyId) != nil {
            names = (.appStoreKeyId, .appStorePrivateKey, .appStorePrivateKeyFile)
        } else {
            return nil
        }
        let (idVariable, inline, file) = names
        guard let keyId = value(idVariable) else { return nil }
        if let pem = value(inline) {
            return try OfferSigningKey(keyId: keyId, issuerId: issuerId, privateKeyPEM: pem)
        }
        if let path = value(file) {
            return try OfferSigningKey(keyId: keyId, issuerId: issuerId, privateKeyFile: path)
        }
        throw OfferSigningError(
            .missingKey, reason: "\(idVariable.rawValue) is set without \(inline.rawValue) or \(file.rawValue) (the .p8 key)"
        )
    }

    /// The public half, to verify signatures with (Apple holds it in App Store Connect).
    public var publicKey: P256.Signing.PublicKey { privateKey.publicKey }

    public var description: String {
        "OfferSigningKey(keyId: \(keyId), issuerId: \(issuerId ?? "none"), privateKey: <redacted>)"
    }
}

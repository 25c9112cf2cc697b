public import Foundation

/// A StoreKit 1 promotional offer signature and the values the app passes with it to
/// `SKPaymentDiscount(identifier:keyIdentifier:nonce:signature:timestamp:)` (Apple's
/// `PromotionalOfferSignatureV1` members).
///
/// The app must buy with `SKMutablePayment.applicationUsername` set to ``applicationUsername``
/// (empty for none): Apple checks the signature over that value, lower-cased.
public struct PromotionalOfferSignatureV1: Sendable, Hashable, Encodable {
    /// The DER ECDSA signature, base64 (`SKPaymentDiscount.signature`).
    public let encodedSignature: String
    /// The subscription's product id.
    public let productId: String
    /// The promotional offer's identifier (`SKPaymentDiscount.identifier`).
    public let offerIdentifier: String
    /// The key id (`SKPaymentDiscount.keyIdentifier`).
    public let keyId: String
    /// The one-time nonce (`SKPaymentDiscount.nonce`), written lower case.
    public let nonce: UUID
    /// UNIX milliseconds when the signature was made (`SKPaymentDiscount.timestamp`); Apple
    /// accepts it for 24 hours.
    public let timestamp: Int64
    /// The application username signed over, lower-cased as signed (usually the app account
    /// token, a UUID; empty for none).
    public let applicationUsername: String

    /// Writes the members under Apple's names, the nonce lower case.
    public func encode(to encoder: any Encoder) throws {
        enum Key: String, CodingKey {
            case encodedSignature, productId, offerIdentifier, keyId, nonce, timestamp, applicationUsername
        }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(encodedSignature, forKey: .encodedSignature)
        try container.encode(productId, forKey: .productId)
        try container.encode(offerIdentifier, forKey: .offerIdentifier)
        try container.encode(keyId, forKey: .keyId)
        try container.encode(nonce.uuidString.lowercased(), forKey: .nonce)
        try container.encode(timestamp, forKey: .timestamp)
        try container.encode(applicationUsername, forKey: .applicationUsername)
    }
}

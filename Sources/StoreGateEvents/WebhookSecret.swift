import Crypto
import StoreGateCore

/// One signing secret of a webhook endpoint, as configured, and the key each signature
/// scheme derives from it.
///
/// An endpoint has one or more; every one signs every delivery, so a secret can be rotated
/// without downtime (add the new one, move the receivers to it, remove the old one).
///
/// - `StoreGate-Signature` (``WebhookSignature``, the scheme Stripe's SDK verifies) keys its
///   HMAC with the UTF-8 bytes of the configured text, whatever its form — as Stripe's SDK
///   does with the `whsec_…` string it is given.
/// - The Standard Webhooks headers (``StandardWebhookSignature``) key theirs with
///   ``standardKey``: for a secret in the specification's form, `whsec_` followed by base64,
///   the decoded bytes (what the specification's libraries do with the same string); for any
///   other (a *plain* secret), the UTF-8 bytes of the text. A receiver using the
///   specification's libraries then configures ``standardWebhooksSecret``:
///   `whsec_` + base64 of those bytes.
///
/// A `whsec_` text whose remainder is not base64 (`whsec_my-secret-…`) is a plain secret:
/// the specification's libraries would decode it leniently to other bytes, so its
/// ``standardWebhooksSecret`` is what such a receiver must be given (a start-up warning says so).
///
/// The text is never printed: `description` is redacted.
public struct WebhookSecret: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible {
    /// How the configured text is read.
    public enum Form: String, Sendable, Hashable {
        /// `whsec_` + base64: the Standard Webhooks key is the decoded bytes.
        case standard
        /// Anything else: the Standard Webhooks key is the text's UTF-8 bytes.
        case plain
    }

    /// The Standard Webhooks prefix.
    public static let standardPrefix = "whsec_"
    /// The shortest configured text, in UTF-8 bytes.
    public static let minimumLength = 16
    /// The shortest key the Standard Webhooks specification asks for (24 random bytes).
    public static let recommendedKeyLength = 24

    /// The secret as configured: the `StoreGate-Signature` key (its UTF-8 bytes).
    public let text: String
    /// How ``text`` is read.
    public let form: Form
    /// The Standard Webhooks HMAC key.
    public let standardKey: [UInt8]

    /// Reads a configured secret.
    ///
    /// - Throws: ``WebhookConfigurationError`` when it is shorter than 16 bytes.
    public init(_ text: String) throws(WebhookConfigurationError) {
        guard text.utf8.count >= Self.minimumLength else {
            throw WebhookConfigurationError("a webhook secret has at least \(Self.minimumLength) bytes")
        }
        self.text = text
        if let key = Self.decodeStandard(text), !key.isEmpty {
            form = .standard
            standardKey = key
        } else {
            form = .plain
            standardKey = Array(text.utf8)
        }
    }

    /// What a receiver gives the Standard Webhooks libraries: ``text`` itself for a
    /// `whsec_` secret, `whsec_` + base64 of its UTF-8 bytes for a plain one.
    public var standardWebhooksSecret: String {
        switch form {
        case .standard: text
        case .plain: Self.standardPrefix + Base64.encode(standardKey)
        }
    }

    /// Whether the text starts with `whsec_` without being base64 after it (a plain secret
    /// that looks like a Standard Webhooks one).
    public var looksStandardButIsPlain: Bool {
        form == .plain && text.hasPrefix(Self.standardPrefix)
    }

    /// A new random secret in the Standard Webhooks form: `whsec_` + base64 of 32 random bytes.
    public static func generate() -> String {
        let key = SymmetricKey(size: .bits256)
        return standardPrefix + key.withUnsafeBytes { Base64.encode(Array($0)) }
    }

    /// The form only, never the secret: `WebhookSecret(standard, redacted)`.
    public var description: String { "WebhookSecret(\(form.rawValue), redacted)" }
    /// As ``description``.
    public var debugDescription: String { description }

    /// The key of `whsec_<base64>` (standard alphabet, padding optional, nothing else);
    /// `nil` for any other text.
    private static func decodeStandard(_ text: String) -> [UInt8]? {
        guard text.hasPrefix(standardPrefix) else { return nil }
        let encoded = text.utf8.dropFirst(standardPrefix.utf8.count)
        // The lenient mode skips whitespace; a secret has none.
        guard !encoded.isEmpty, !encoded.contains(where: { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) else { return nil }
        return Base64.decode(encoded, mode: .standardLenient)
    }
}

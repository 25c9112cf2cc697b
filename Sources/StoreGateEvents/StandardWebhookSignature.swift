public import Foundation
import Crypto
import StoreGateCore

/// The Standard Webhooks signature of a delivery (standardwebhooks.com, version 1.0.0), sent
/// beside `StoreGate-Signature` so that receivers can verify deliveries with that
/// specification's libraries:
///
///     webhook-id: 6c4c5f0e-8a55-4c1e-9d1b-2f1f3e0a9b7d
///     webhook-timestamp: 1732450000
///     webhook-signature: v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4= v1,…
///
/// `webhook-id` is the event's `id` (the same on every attempt: the receiver's idempotency
/// key), `webhook-timestamp` the sending time in Unix seconds, and `webhook-signature` a
/// space-separated `v1,<base64>` for every live secret of the endpoint: the HMAC-SHA256, keyed
/// by the secret's ``WebhookSecret/standardKey``, of `"\(id).\(timestamp)." + body`. A receiver
/// recomputes it over the raw body, compares in constant time, and refuses a timestamp more
/// than a few minutes from now.
public enum StandardWebhookSignature {
    /// `webhook-id`.
    public static let idHeaderName = "webhook-id"
    /// `webhook-timestamp`.
    public static let timestampHeaderName = "webhook-timestamp"
    /// `webhook-signature`.
    public static let signatureHeaderName = "webhook-signature"

    /// The three headers of one attempt.
    public struct Headers: Sendable, Hashable {
        /// `webhook-id`: the event id.
        public var id: String
        /// `webhook-timestamp`: Unix seconds.
        public var timestamp: Int64
        /// `webhook-signature`: `v1,<base64>`, space-separated, one per secret.
        public var signature: String

        /// The headers as (name, value) pairs, in the specification's order.
        public var fields: [(name: String, value: String)] {
            [
                (StandardWebhookSignature.idHeaderName, id), (StandardWebhookSignature.timestampHeaderName, String(timestamp)),
                (StandardWebhookSignature.signatureHeaderName, signature),
            ]
        }
    }

    /// Why a delivery's Standard Webhooks signature was refused.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// A header is missing or malformed (`webhook-id` empty or holding a `.`,
        /// `webhook-timestamp` not Unix seconds, `webhook-signature` not `v<n>,<base64>` items).
        case malformedHeader
        /// No `v1` signature matches the id, timestamp, body and secret.
        case mismatch
        /// The timestamp is further from now than the tolerance (a replay, or a wrong clock).
        case outsideTolerance(seconds: Int64)

        /// What failed, for people (never a secret).
        public var description: String {
            switch self {
            case .malformedHeader: return "the webhook-id, webhook-timestamp or webhook-signature header is missing or malformed"
            case .mismatch: return "no v1 signature matches the id, timestamp, body and secret"
            case .outsideTolerance(let seconds): return "the webhook-timestamp is \(seconds) s from now, outside the tolerance"
            }
        }
    }

    /// The headers for `body`, the event `id`, sent at `date`, signed with every secret.
    ///
    /// - Parameter id: The event id: a lowercase UUID, never holding a `.` (the signed text
    ///   separates its parts with them).
    public static func headers(id: String, body: some Collection<UInt8>, secrets: [WebhookSecret], at date: Date) -> Headers {
        let timestamp = Int64(date.timeIntervalSince1970.rounded(.down))
        return Headers(id: id, timestamp: timestamp, signature: signature(id: id, timestamp: timestamp, body: body, keys: secrets.map(\.standardKey)))
    }

    /// `webhook-signature` for `body`: `v1,<base64>` per key, space-separated.
    public static func signature(id: String, timestamp: Int64, body: some Collection<UInt8>, keys: [[UInt8]]) -> String {
        let bytes = Array(body)
        return keys.map { "v1," + Base64.encode(mac(id: id, timestamp: timestamp, body: bytes, key: $0)) }.joined(separator: " ")
    }

    /// Checks a received delivery's headers against its raw body, as the specification's
    /// libraries do.
    ///
    /// - Parameters:
    ///   - id: `webhook-id`.
    ///   - timestamp: `webhook-timestamp`.
    ///   - signature: `webhook-signature`; items of other versions (`v1a`, …) are ignored.
    ///   - secret: The receiver's secret: `whsec_…` as the endpoint's
    ///     ``WebhookSecret/standardWebhooksSecret`` says, or the endpoint's configured text.
    ///   - tolerance: The largest accepted distance between the timestamp and `now`
    ///     (default 5 minutes, the libraries' own).
    /// - Returns: The signed timestamp.
    /// - Throws: ``Failure``.
    @discardableResult
    public static func verify(
        id: String, timestamp: String, signature: String, body: some Collection<UInt8>, secret: WebhookSecret, now: Date = Date(),
        tolerance: Duration = .seconds(300)
    ) throws(Failure) -> Date {
        guard !id.isEmpty, id.utf8.count <= 256, !id.utf8.contains(UInt8(ascii: ".")) else { throw .malformedHeader }
        guard (1...12).contains(timestamp.utf8.count), timestamp.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let seconds = Int64(timestamp) else {
            throw .malformedHeader
        }
        var candidates: [[UInt8]] = []
        for item in signature.split(separator: " ", omittingEmptySubsequences: true) {
            let pair = item.split(separator: ",", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2, !pair[0].isEmpty else { throw .malformedHeader }
            guard pair[0] == "v1" else { continue }  // other schemes: ignored, as the specification says
            guard let bytes = Base64.decode(pair[1], mode: .standard), bytes.count == 32 else { throw .malformedHeader }
            candidates.append(bytes)
        }
        guard !candidates.isEmpty else { throw .malformedHeader }
        // swift-crypto compares authentication codes in constant time.
        let key = SymmetricKey(data: secret.standardKey)
        let signed = Array("\(id).\(seconds).".utf8) + Array(body)
        var matched = false
        for candidate in candidates {
            matched = HMAC<SHA256>.isValidAuthenticationCode(candidate, authenticating: signed, using: key) || matched
        }
        guard matched else { throw .mismatch }
        let distance = abs(Int64(now.timeIntervalSince1970.rounded(.down)) - seconds)
        guard distance <= tolerance.components.seconds else { throw .outsideTolerance(seconds: distance) }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    static func mac(id: String, timestamp: Int64, body: [UInt8], key: [UInt8]) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: key))
        hmac.update(data: Array("\(id).\(timestamp).".utf8))
        hmac.update(data: body)
        return Array(hmac.finalize())
    }
}

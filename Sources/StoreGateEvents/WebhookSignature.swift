public import Foundation
import Crypto
import StoreGateCore

/// The signature of a webhook delivery: HMAC-SHA256 over the timestamp and the body, sent as
///
///     StoreGate-Signature: t=1732450000,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd
///
/// where `t` is the sending time in Unix seconds and `v1` is the lowercase hexadecimal
/// HMAC-SHA256, keyed by the endpoint's secret, of `"\(t)." + body`. A receiver recomputes it
/// over the raw body bytes, compares in constant time, and refuses a `t` older than a few
/// minutes (a replayed delivery). An endpoint with several secrets (a rotation) sends one `v1`
/// per secret; any one matching is enough.
/// Every attempt is signed anew, with its own `t`; the event's `id` stays the same.
///
/// The format is Stripe's `Stripe-Signature`, so Stripe's SDKs verify it
/// (`stripe.WebhookSignature.verify_header(body, header, secret)`), keyed by the secret's text as
/// configured. Deliveries also carry the Standard Webhooks headers (``StandardWebhookSignature``).
public enum WebhookSignature {
    /// The header's name.
    public static let headerName = "StoreGate-Signature"

    /// Why a signature was refused.
    public enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The header is not `t=…,v1=…`.
        case malformedHeader
        /// No `v1` matches the body and secret.
        case mismatch
        /// `t` is further from now than the tolerance (a replay, or a wrong clock).
        case outsideTolerance(seconds: Int64)

        public var description: String {
            switch self {
            case .malformedHeader: return "the signature header is not t=<unix seconds>,v1=<hex>"
            case .mismatch: return "no signature matches the body and the secret"
            case .outsideTolerance(let seconds): return "the signature's timestamp is \(seconds) s from now, outside the tolerance"
            }
        }
    }

    /// The header value for `body` sent at `date`.
    public static func header(body: some Collection<UInt8>, secret: String, at date: Date) -> String {
        let timestamp = Int64(date.timeIntervalSince1970.rounded(.down))
        return "t=\(timestamp),v1=\(Hex.encode(mac(body: body, secret: secret, timestamp: timestamp)))"
    }

    /// The header value for `body` sent at `date`, with one `v1` per secret (in their order),
    /// keyed by each secret's configured text: `t=…,v1=…,v1=…`.
    public static func header(body: some Collection<UInt8>, secrets: [WebhookSecret], at date: Date) -> String {
        let timestamp = Int64(date.timeIntervalSince1970.rounded(.down))
        let bytes = Array(body)
        return (["t=\(timestamp)"] + secrets.map { "v1=" + Hex.encode(mac(body: bytes, secret: $0.text, timestamp: timestamp)) })
            .joined(separator: ",")
    }

    /// Checks a received header against the raw body.
    ///
    /// - Parameters:
    ///   - tolerance: The largest accepted distance between `t` and `now` (default 5 minutes).
    /// - Returns: The signed timestamp.
    /// - Throws: ``Failure``.
    @discardableResult
    public static func verify(
        header: String, body: some Collection<UInt8>, secret: String, now: Date = Date(), tolerance: Duration = .seconds(300)
    ) throws(Failure) -> Date {
        var timestamp: Int64?
        var candidates: [[UInt8]] = []
        for part in header.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard pair.count == 2 else { throw .malformedHeader }
            switch pair[0] {
            case "t":
                guard timestamp == nil, pair[1].utf8.count <= 12, pair[1].utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let value = Int64(pair[1]) else {
                    throw .malformedHeader
                }
                timestamp = value
            case "v1":
                guard let bytes = Hex.decode(pair[1]), bytes.count == 32 else { throw .malformedHeader }
                candidates.append(bytes)
            default:
                continue  // other schemes: ignored, as a receiver should
            }
        }
        guard let timestamp, !candidates.isEmpty else { throw .malformedHeader }
        // swift-crypto compares authentication codes in constant time.
        let key = SymmetricKey(data: Array(secret.utf8))
        let signed = Array("\(timestamp).".utf8) + Array(body)
        var matched = false
        for candidate in candidates {
            matched = HMAC<SHA256>.isValidAuthenticationCode(candidate, authenticating: signed, using: key) || matched
        }
        guard matched else { throw .mismatch }
        let distance = abs(Int64(now.timeIntervalSince1970.rounded(.down)) - timestamp)
        guard distance <= tolerance.components.seconds else { throw .outsideTolerance(seconds: distance) }
        return Date(timeIntervalSince1970: TimeInterval(timestamp))
    }

    static func mac(body: some Collection<UInt8>, secret: String, timestamp: Int64) -> [UInt8] {
        var hmac = HMAC<SHA256>(key: SymmetricKey(data: Array(secret.utf8)))
        hmac.update(data: Array("\(timestamp).".utf8))
        hmac.update(data: Array(body))
        return Array(hmac.finalize())
    }
}

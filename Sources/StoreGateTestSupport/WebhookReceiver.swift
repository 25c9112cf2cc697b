import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StoreGateEvents
import Synchronization

/// A webhook receiver on 127.0.0.1 (port 0) for tests and benchmarks: it checks each
/// delivery's signatures (`StoreGate-Signature` and the Standard Webhooks headers) with its one
/// secret, remembers what arrived, and answers as its ``Mode`` says — healthy, failing, timing
/// out and answering slowly at random, or `410 Gone`.
public final class WebhookReceiver: Sendable {
    /// How the receiver answers.
    public enum Mode: Sendable {
        /// 200 at once.
        case healthy
        /// At random: `failures` of the requests get a 500, `stalls` answer 200 only after
        /// `stall` (past the sender's timeout: the sender retries what the receiver took),
        /// `slow` answer 200 after `slowDelay`.
        case chaos(failures: Double, stalls: Double, stall: Duration, slow: Double, slowDelay: Duration)
        /// 410 Gone at once: the receiver wants no more deliveries.
        case gone
    }

    /// One request as it arrived.
    public struct Received: Sendable, Hashable {
        public var id: String
        public var sequence: Int64
        public var account: String
        public var type: String
        /// Whether `StoreGate-Signature` verified over the raw body.
        public var signatureValid: Bool
        /// Whether the Standard Webhooks headers verified over the raw body (and `webhook-id`
        /// is the event's id).
        public var standardSignatureValid: Bool
        /// The status the receiver answered.
        public var status: Int
        /// The `StoreGate-Delivery-Attempt` header.
        public var attempt: Int
        /// The W3C `traceparent` header, sent when the sender exports traces.
        public var traceparent: String?
    }

    private let secret: String
    private let state = Mutex<(mode: Mode, received: [Received])>((.healthy, []))
    private let port = Mutex<Int>(0)

    private init(secret: String) {
        self.secret = secret
    }

    /// The URL deliveries go to.
    public var url: String { "http://127.0.0.1:\(port.withLock { $0 })/hook" }

    public func setMode(_ mode: Mode) { state.withLock { $0.mode = mode } }

    /// Every request so far, in arrival order.
    public var received: [Received] { state.withLock { $0.received } }

    /// Starts a receiver, runs `body` with it, and stops it.
    public static func run<T: Sendable>(secret: String, _ body: @Sendable (WebhookReceiver) async throws -> T) async throws -> T {
        let receiver = WebhookReceiver(secret: secret)
        let router = Router()
        router.post("/hook") { request, _ -> Response in
            let bytes = Array(try await request.body.collect(upTo: 1 << 20).readableBytesView)
            return try await receiver.take(request.headers, bytes)
        }
        return try await TestHTTPServer.run(router, name: "StoreGate webhook receiver") { port in
            receiver.port.withLock { $0 = port }
            return try await body(receiver)
        }
    }

    private func take(_ headers: HTTPFields, _ body: [UInt8]) async throws -> Response {
        let signature = headers[HTTPField.Name(WebhookSignature.headerName)!] ?? ""
        let valid = (try? WebhookSignature.verify(header: signature, body: body, secret: secret)) != nil
        let object = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] ?? [:]
        let webhookId = headers[HTTPField.Name(StandardWebhookSignature.idHeaderName)!] ?? ""
        var standardValid = false
        if let key = try? WebhookSecret(secret), webhookId == object["id"] as? String {
            standardValid = (try? StandardWebhookSignature.verify(
                id: webhookId, timestamp: headers[HTTPField.Name(StandardWebhookSignature.timestampHeaderName)!] ?? "",
                signature: headers[HTTPField.Name(StandardWebhookSignature.signatureHeaderName)!] ?? "", body: body, secret: key
            )) != nil
        }
        let attempt = headers[HTTPField.Name("StoreGate-Delivery-Attempt")!].flatMap { Int($0) } ?? 0
        let mode = state.withLock { $0.mode }
        var status = 200
        var delay: Duration?
        if case .gone = mode {
            status = 410
        } else if case .chaos(let failures, let stalls, let stall, let slow, let slowDelay) = mode {
            let roll = Double.random(in: 0..<1)
            if roll < failures {
                status = 500
            } else if roll < failures + stalls {
                delay = stall
            } else if roll < failures + stalls + slow {
                delay = slowDelay
            }
        }
        state.withLock {
            $0.received.append(Received(
                id: object["id"] as? String ?? "", sequence: (object["sequence"] as? NSNumber)?.int64Value ?? 0,
                account: object["account"] as? String ?? "", type: object["type"] as? String ?? "",
                signatureValid: valid, standardSignatureValid: standardValid, status: status, attempt: attempt,
                traceparent: headers[HTTPField.Name("traceparent")!]
            ))
        }
        if let delay { try? await Task.sleep(for: delay) }
        return Response(status: HTTPResponse.Status(code: status))
    }
}

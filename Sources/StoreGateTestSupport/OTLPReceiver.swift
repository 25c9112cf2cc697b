import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// An OTLP/HTTP trace endpoint on 127.0.0.1 (port 0) for tests: it takes what an exporter
/// posts to `/v1/traces` as OTLP/JSON (`OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), answers
/// success, and keeps every span it could read.
///
/// OTLP/JSON as swift-otel writes it is protobuf's JSON mapping: trace and span ids are
/// base64, not hex; ``Span`` holds them as lowercase hex, as `traceparent` does.
public final class OTLPReceiver: Sendable {
    /// One span as exported.
    public struct Span: Sendable, Hashable {
        /// The trace id, 32 lowercase hex digits.
        public var traceId: String
        /// The span id, 16 lowercase hex digits.
        public var spanId: String
        /// The parent's span id (16 hex digits), `nil` for a root span.
        public var parentSpanId: String?
        /// The span's name.
        public var name: String
        /// The span kind as OTLP numbers it (1 internal, 2 server, 3 client).
        public var kind: Int
        /// The string and integer attributes, integers written in decimal.
        public var attributes: [String: String]
        /// The `service.name` of the resource the span came with.
        public var serviceName: String?
    }

    private let state = Mutex<(spans: [Span], requests: Int, unreadable: [String])>(([], 0, []))
    private let port = Mutex<Int>(0)

    private init() {}

    /// The base URL to give as `OTEL_EXPORTER_OTLP_ENDPOINT`.
    public var endpoint: String { "http://127.0.0.1:\(port.withLock { $0 })" }

    /// Every span so far, in arrival order.
    public var spans: [Span] { state.withLock { $0.spans } }

    /// How many export requests arrived, readable or not.
    public var requests: Int { state.withLock { $0.requests } }

    /// Why each unreadable export request could not be read (empty when all could).
    public var unreadable: [String] { state.withLock { $0.unreadable } }

    /// Starts a receiver (in a ``TestServerSlots`` slot), runs `body` with it, and stops it.
    public static func run<T: Sendable>(_ body: @Sendable (OTLPReceiver) async throws -> T) async throws -> T {
        let receiver = OTLPReceiver()
        let router = Router()
        router.post("/v1/traces") { request, _ -> Response in
            let bytes = Array(try await request.body.collect(upTo: 16 << 20).readableBytesView)
            receiver.take(bytes)
            var headers = HTTPFields()
            headers[.contentType] = "application/json"
            return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(string: "{}")))
        }
        return try await TestHTTPServer.run(router, name: "StoreGate OTLP receiver") { port in
            receiver.port.withLock { $0 = port }
            return try await body(receiver)
        }
    }

    private func take(_ body: [UInt8]) {
        do {
            let spans = try Self.spans(in: body)
            state.withLock {
                $0.requests += 1
                $0.spans += spans
            }
        } catch {
            state.withLock {
                $0.requests += 1
                $0.unreadable.append("\(error)")
            }
        }
    }

    /// The spans of one `ExportTraceServiceRequest` in OTLP/JSON.
    static func spans(in body: [UInt8]) throws -> [Span] {
        guard let root = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw AppleStandIn.StandInError("the export request is not a JSON object")
        }
        var spans: [Span] = []
        for resourceSpans in root["resourceSpans"] as? [[String: Any]] ?? [] {
            let resourceAttributes = Self.attributes((resourceSpans["resource"] as? [String: Any])?["attributes"])
            for scopeSpans in resourceSpans["scopeSpans"] as? [[String: Any]] ?? [] {
                for span in scopeSpans["spans"] as? [[String: Any]] ?? [] {
                    guard let traceId = Self.hex(span["traceId"]), traceId.count == 32,
                        let spanId = Self.hex(span["spanId"]), spanId.count == 16,
                        let name = span["name"] as? String
                    else {
                        throw AppleStandIn.StandInError("a span without a readable traceId, spanId or name")
                    }
                    let parent = Self.hex(span["parentSpanId"])
                    spans.append(Span(
                        traceId: traceId, spanId: spanId, parentSpanId: parent?.isEmpty == false ? parent : nil, name: name,
                        kind: (span["kind"] as? NSNumber)?.intValue ?? 0, attributes: Self.attributes(span["attributes"]),
                        serviceName: resourceAttributes["service.name"]
                    ))
                }
            }
        }
        return spans
    }

    /// Protobuf's JSON mapping writes `bytes` as base64; OTLP/JSON proper writes ids in hex.
    /// Either is read here.
    private static func hex(_ value: Any?) -> String? {
        guard let text = value as? String else { return nil }
        if text.isEmpty { return "" }
        if text.count == 32 || text.count == 16, text.allSatisfy(\.isHexDigit) { return text.lowercased() }
        guard let bytes = Data(base64Encoded: text) else { return nil }
        return bytes.map { String(format: "%02x", $0) }.joined()
    }

    private static func attributes(_ value: Any?) -> [String: String] {
        var attributes: [String: String] = [:]
        for attribute in value as? [[String: Any]] ?? [] {
            guard let key = attribute["key"] as? String, let value = attribute["value"] as? [String: Any] else { continue }
            if let string = value["stringValue"] as? String {
                attributes[key] = string
            } else if let integer = value["intValue"] {
                attributes[key] = "\(integer)"
            } else if let bool = value["boolValue"] as? Bool {
                attributes[key] = "\(bool)"
            }
        }
        return attributes
    }
}

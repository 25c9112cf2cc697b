import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `storegate serve` exporting traces over OTLP/HTTP (issue 32 item 5): the span tree of one
/// verify-and-record request under an incoming `traceparent`, `traceparent` on webhook
/// deliveries, the trace id in the request's log lines, and nothing at all without
/// `OTEL_EXPORTER_OTLP_ENDPOINT`.
@Suite("storegate serve exports the spans of a request over OTLP, and nothing without an OTLP endpoint")
struct TracingCLITests {
    static let traceId = "4bf92f3577b34da6a3ce929d0e0e4736"
    static let callerSpanId = "00f067aa0ba902b7"
    static let webhookSecret = "whsec_traces-secret-0123456789"

    /// A running `storegate serve`, its standard error going to a file.
    struct Serve {
        let process: Process
        let port: Int
        let stderr: URL

        static func start(_ name: String, environment extra: [String: String], webhookURL: String? = nil) async throws -> Serve {
            let settings = ["STOREGATE_LOG_LEVEL": "debug", "STOREGATE_SHUTDOWN_GRACE_SECONDS": "15"].merging(extra) { _, new in new }
            let serve = try await ServeProcess.start(name, environment: settings, logToFile: true) { directory in
                guard let webhookURL else { return [:] }
                let file = directory.appendingPathComponent("webhooks.json")
                let endpoints: [String: Any] = ["endpoints": [["name": "traces", "url": webhookURL, "secret": TracingCLITests.webhookSecret]]]
                try JSONSerialization.data(withJSONObject: endpoints).write(to: file)
                // The receiver listens on 127.0.0.1, which the default address policy refuses.
                return ["STOREGATE_WEBHOOKS_FILE": file.path, "STOREGATE_WEBHOOK_ALLOW_PRIVATE": "1"]
            }
            return Serve(process: serve.process, port: serve.port, stderr: try #require(serve.stderr))
        }

        var log: String { (try? String(contentsOf: stderr, encoding: .utf8)) ?? "" }  // a test reading its own file

        /// POST /v1/receipts/verify with a minted receipt, carrying `traceparent` when given.
        func verifyAndRecord(traceparent: String?) async throws -> Int {
            var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)/v1/receipts/verify")))
            request.httpMethod = "POST"
            request.timeoutInterval = 20
            request.setValue("Bearer \(ServeProcess.key)", forHTTPHeaderField: "Authorization")
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            if let traceparent { request.setValue(traceparent, forHTTPHeaderField: "traceparent") }
            request.httpBody = try JSONSerialization.data(withJSONObject: try ServeProcess.receipt(0))
            let (_, response) = try await URLSession.shared.data(for: request)
            return (response as? HTTPURLResponse)?.statusCode ?? 0
        }

        /// SIGTERM, then waits (at most 20 s) for the exit status.
        func stop() async throws -> Int32 {
            process.terminate()
            let deadline = ContinuousClock.now + .seconds(20)
            while process.isRunning && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            try #require(!process.isRunning, "storegate serve did not stop within 20 s")
            return process.terminationStatus
        }
    }

    /// Waits (at most 20 s) until `condition` holds.
    static func eventually(_ condition: () -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while !condition() {
            guard ContinuousClock.now < deadline else { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return true
    }

    @Test("the request's span continues the caller's trace; verification and the ledger write are inside it; the webhook delivery sends its traceparent; flushed at shutdown")
    func spanTreeOfOneRequest() async throws {
        try await OTLPReceiver.run { otlp in
            try await WebhookReceiver.run(secret: Self.webhookSecret) { webhooks in
                // A batch delay far past the test: the spans can only arrive by the flush at shutdown.
                let serve = try await Serve.start(
                    "traces-on",
                    environment: [
                        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
                        "OTEL_BSP_SCHEDULE_DELAY": "600000",
                    ],
                    webhookURL: webhooks.url
                )
                defer { if serve.process.isRunning { serve.process.terminate() } }
                #expect(try await serve.verifyAndRecord(traceparent: "00-\(Self.traceId)-\(Self.callerSpanId)-01") == 200)
                #expect(try await Self.eventually { !webhooks.received.isEmpty }, "no webhook delivery arrived")
                #expect(try await serve.stop() == 0)

                let spans = otlp.spans
                #expect(otlp.unreadable.isEmpty, "\(otlp.unreadable)")
                #expect(!spans.isEmpty && spans.allSatisfy { $0.serviceName == "storegate" })
                // The request: a server span, child of the caller's span, in the caller's trace.
                let requests = spans.filter { $0.kind == 2 && $0.parentSpanId == Self.callerSpanId }
                try #require(requests.count == 1, "one request span under the caller's: \(spans.map(\.name))")
                let request = requests[0]
                #expect(request.traceId == Self.traceId)
                #expect(request.name == "/v1/receipts/verify")
                #expect(request.attributes["http.response.status_code"] == "200")
                // Verification and the ledger write: descendants of the request span, same trace.
                func isDescendant(_ span: OTLPReceiver.Span, of ancestor: OTLPReceiver.Span) -> Bool {
                    var parent = span.parentSpanId
                    var hops = 0
                    while let id = parent, hops < 32 {
                        if id == ancestor.spanId { return true }
                        parent = spans.first { $0.spanId == id }?.parentSpanId
                        hops += 1
                    }
                    return false
                }
                for name in [Traces.receiptVerification, Traces.ledgerRecord] {
                    let found = spans.filter { $0.name == name }
                    #expect(found.count == 1, "\(name): \(spans.map(\.name))")
                    for span in found {
                        #expect(span.traceId == Self.traceId && isDescendant(span, of: request), "\(name) is not inside the request span")
                    }
                }
                #expect(spans.first { $0.name == Traces.ledgerRecord }?.attributes["storegate.record.new_transactions"] == "1")
                // The webhook delivery: a client span of its own trace, whose context the delivery carried.
                let deliveries = spans.filter { $0.name == Traces.webhookDelivery }
                let delivery = try #require(deliveries.first, "no webhook delivery span: \(spans.map(\.name))")
                #expect(delivery.kind == 3 && delivery.attributes["storegate.webhook.endpoint"] == "traces")
                let traceparent = try #require(webhooks.received.first?.traceparent, "the delivery carried no traceparent")
                #expect(traceparent.hasPrefix("00-\(delivery.traceId)-\(delivery.spanId)-"), "\(traceparent)")
                // The request's log lines carry the trace id.
                let recorded = serve.log.split(separator: "\n").filter { $0.contains("recorded a proof") }
                #expect(recorded.count == 1, "the request's debug line: \(serve.log)")
                #expect(recorded.allSatisfy { $0.contains("trace_id=\(Self.traceId)") && $0.contains("span_id=") }, "\(recorded)")
            }
        }
    }

    @Test("without OTEL_EXPORTER_OTLP_ENDPOINT no tracer runs: nothing is exported, no traceparent is sent, no log line names a trace")
    func nothingWithoutEndpoint() async throws {
        try await OTLPReceiver.run { otlp in
            try await WebhookReceiver.run(secret: Self.webhookSecret) { webhooks in
                // Every other OTEL_ variable set, the traces endpoint among them but disabled: still off.
                let serve = try await Serve.start(
                    "traces-off",
                    environment: [
                        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_BSP_SCHEDULE_DELAY": "100",
                        "OTEL_SERVICE_NAME": "storegate-off",
                    ],
                    webhookURL: webhooks.url
                )
                defer { if serve.process.isRunning { serve.process.terminate() } }
                #expect(try await serve.verifyAndRecord(traceparent: "00-\(Self.traceId)-\(Self.callerSpanId)-01") == 200)
                #expect(try await Self.eventually { !webhooks.received.isEmpty }, "no webhook delivery arrived")
                #expect(try await serve.stop() == 0)
                #expect(otlp.requests == 0)
                #expect(webhooks.received.allSatisfy { $0.traceparent == nil })
                let log = serve.log
                #expect(log.contains("traces=off"), "the start-up summary says traces are off")
                #expect(log.contains("recorded a proof") && !log.contains("trace_id="))
                #expect(!log.contains("exporting traces"))
            }
        }
    }

    @Test("OTEL_SDK_DISABLED=true keeps traces off even with an endpoint")
    func disabledWithEndpoint() async throws {
        try await OTLPReceiver.run { otlp in
            let serve = try await Serve.start(
                "traces-disabled",
                environment: ["OTEL_EXPORTER_OTLP_ENDPOINT": otlp.endpoint, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json", "OTEL_SDK_DISABLED": "true"]
            )
            defer { if serve.process.isRunning { serve.process.terminate() } }
            #expect(try await serve.verifyAndRecord(traceparent: "00-\(Self.traceId)-\(Self.callerSpanId)-01") == 200)
            #expect(try await serve.stop() == 0)
            #expect(otlp.requests == 0)
            #expect(serve.log.contains("traces=off"))
        }
    }
}

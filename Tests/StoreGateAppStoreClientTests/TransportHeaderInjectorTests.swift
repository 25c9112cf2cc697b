import StoreGateAppStoreClient
import Testing
import StoreGateHTTP

/// Trace context written into an outgoing request's headers (webhook deliveries).
@Suite("the transport header injector sets trace headers, replacing any of the same name")
struct TransportHeaderInjectorTests {
    @Test("a new header is added; one of the same name, in any case, is replaced, others kept")
    func injects() {
        var headers: [TransportRequest.Header] = [.init("Content-Type", "application/json"), .init("TraceParent", "00-stale-stale-00")]
        let injector = TransportHeaderInjector()
        injector.inject("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", forKey: "traceparent", into: &headers)
        injector.inject("vendor=1", forKey: "tracestate", into: &headers)
        #expect(headers == [
            .init("Content-Type", "application/json"),
            .init("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
            .init("tracestate", "vendor=1"),
        ])
    }
}

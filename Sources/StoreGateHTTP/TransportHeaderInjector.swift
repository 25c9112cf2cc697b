public import Tracing

/// Writes trace context into a ``TransportRequest``'s headers: what an instrument injects
/// (W3C `traceparent` and `tracestate` with swift-otel's propagator) replaces any header of
/// the same name.
///
/// ```swift
/// InstrumentationSystem.instrument.inject(span.context, into: &request.headers, using: TransportHeaderInjector())
/// ```
public struct TransportHeaderInjector: Injector {
    /// Creates the injector.
    public init() {}

    /// Sets the header `key` to `value`, replacing one of the same name (compared case-insensitively).
    public func inject(_ value: String, forKey key: String, into carrier: inout [TransportRequest.Header]) {
        let lower = key.lowercased()
        carrier.removeAll { $0.name.lowercased() == lower }
        carrier.append(TransportRequest.Header(key, value))
    }
}

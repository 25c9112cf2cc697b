import Logging
import StoreGateServer
import Testing

/// When `storegate serve` exports traces: decided from the standard OpenTelemetry variables.
@Suite("traces are exported only when an OTLP endpoint is set and the SDK is not disabled")
struct TracingConfigurationTests {
    @Test("OTEL_* variables and the outcome", arguments: [
        ([:], false),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"], true),
        (["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"], true),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": ""], false),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "  "], false),
        (["OTEL_SERVICE_NAME": "storegate", "OTEL_BSP_SCHEDULE_DELAY": "100"], false),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "true"], false),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "TRUE"], false),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_SDK_DISABLED": "false"], true),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "none"], false),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "console"], false),
        (["OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_TRACES_EXPORTER": "otlp"], true),
    ] as [([String: String], Bool)])
    func exportsTraces(environment: [String: String], expected: Bool) throws {
        let configuration = try ServerConfiguration.load(environment: environment)
        #expect(configuration.exportsTraces == expected)
        #expect(configuration.summary["traces"] == (expected ? "otlp" : "off"))
    }
}

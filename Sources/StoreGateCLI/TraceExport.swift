import Logging
import OTel
import ServiceLifecycle
import StoreGateCore
import Tracing

/// The OTLP trace exporter of `storegate serve`, set up only when
/// `ServerConfiguration.exportsTraces` (`OTEL_EXPORTER_OTLP_ENDPOINT` set).
///
/// Traces only: logs keep going to standard error and metrics to `/metrics`. swift-otel reads
/// the standard variables (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`,
/// `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER*`, `OTEL_BSP_*`, `OTEL_PROPAGATORS`);
/// StoreGate's defaults differ from swift-otel's in three places: the service is named
/// `storegate`, the protocol is `http/protobuf` (the build leaves gRPC out), and swift-otel's
/// own diagnostics are logged from `warning` up.
enum TraceExport {
    /// Bootstraps the process's tracer (W3C trace context propagation by default) and returns
    /// the service that batches and exports its spans; run it in the service group, before
    /// the application, so it flushes after the last request.
    ///
    /// - Throws: ``CLIError`` naming the variable swift-otel refused.
    static func bootstrap(logger: Logger) throws -> any Service {
        var configuration = OTel.Configuration.default
        configuration.serviceName = "storegate"
        configuration.resourceAttributes["service.version"] = StoreGateVersion.current
        configuration.diagnosticLogger = .custom(logger)
        // Export failures, not one info line per OTEL_ variable read (OTEL_LOG_LEVEL changes it).
        configuration.diagnosticLogLevel = .warning
        configuration.logs.enabled = false
        configuration.metrics.enabled = false
        configuration.traces.otlpExporter.protocol = .httpProtobuf
        do {
            let backend = try OTel.makeTracingBackend(configuration: configuration)
            InstrumentationSystem.bootstrap(backend.factory)
            logger.info("exporting traces over OTLP")
            return backend.service
        } catch {
            throw CLIError("OTEL_*: cannot export traces: \(error)")
        }
    }
}

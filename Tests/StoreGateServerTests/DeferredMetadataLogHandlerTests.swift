import Logging
import StoreGateServer
import Synchronization
import Testing

/// The service's log handler writes the same lines as swift-log's `StreamLogHandler` would,
/// for every mix of logger metadata, provider metadata and line metadata, including keys that
/// collide (the line's value wins over the provider's, which wins over the logger's).
@Suite("Deferred-metadata log handler")
struct DeferredMetadataLogHandlerTests {
    final class Capture: TextOutputStream, @unchecked Sendable {
        private let lines = Mutex<[String]>([])
        func write(_ string: String) { lines.withLock { $0.append(string) } }
        /// The lines without their leading timestamp (to the second, it may differ between two handlers).
        var written: [String] {
            lines.withLock { $0 }.map { String($0.drop { $0 != " " }) }
        }
    }

    struct Stream: TextOutputStream, Sendable {
        let capture: Capture
        func write(_ string: String) { capture.write(string) }
    }

    static func loggers(provider: Logger.MetadataProvider?) -> (plain: Logger, deferred: Logger, Capture, Capture) {
        let plainCapture = Capture()
        let deferredCapture = Capture()
        var plain = Logger(label: "storegate") { label in
            StreamLogHandler(label: label, stream: Stream(capture: plainCapture), metadataProvider: provider)
        }
        var deferred = Logger(label: "storegate") { label in
            DeferredMetadataLogHandler(StreamLogHandler(label: label, stream: Stream(capture: deferredCapture), metadataProvider: provider))
        }
        plain.logLevel = .info
        deferred.logLevel = .info
        return (plain, deferred, plainCapture, deferredCapture)
    }

    @Test("the same lines as StreamLogHandler, with and without a metadata provider", arguments: [false, true])
    func sameLines(withProvider: Bool) {
        let provider = withProvider ? Logger.MetadataProvider { ["trace_id": "abc", "api_key": "from-provider"] } : nil
        var (plain, deferred, plainCapture, deferredCapture) = Self.loggers(provider: provider)
        func both(_ body: (inout Logger) -> Void) {
            body(&plain)
            body(&deferred)
        }
        both { $0.info("no metadata") }
        both { $0[metadataKey: "hb.request.id"] = "42" }
        both { $0[metadataKey: "api_key"] = "load" }
        both { $0.info("two set") }
        both { $0.debug("below the level") }
        both { $0.warning("with line metadata", metadata: ["api_key": "explicit", "status": "503"]) }
        both { $0[metadataKey: "hb.request.id"] = nil }
        both { $0.error("one removed") }
        #expect(plainCapture.written.count == 4)
        #expect(deferredCapture.written == plainCapture.written)
        if withProvider {
            #expect(deferredCapture.written[1].contains("api_key=from-provider"))
            #expect(deferredCapture.written[2].contains("api_key=explicit"))
        } else {
            #expect(deferredCapture.written[1].contains("api_key=load hb.request.id=42"))
        }
    }

    @Test("metadata and level read back as set")
    func readBack() {
        var logger = Logger(label: "storegate") { label in
            DeferredMetadataLogHandler(StreamLogHandler(label: label, stream: Stream(capture: Capture()), metadataProvider: nil))
        }
        logger[metadataKey: "component"] = "ledger"
        logger.logLevel = .warning
        #expect(logger[metadataKey: "component"] == "ledger")
        #expect(logger.logLevel == .warning)
        #expect(logger.handler.metadata == ["component": "ledger"])
    }
}

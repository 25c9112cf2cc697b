import Hummingbird
import HummingbirdCore
import Logging
import NIOCore

/// The one way the test servers (Apple stand-in, webhook receiver, OTLP receiver) run: a
/// router on 127.0.0.1 in a ``TestServerSlots`` slot, `body` once the port is bound, then
/// stopped.
enum TestHTTPServer {
    /// Serves `router` and runs `body` with the bound port.
    ///
    /// - Parameters:
    ///   - name: The server's name (its `Server` header, and the error when it does not start).
    ///   - server: HTTP/1.1 by default; TLS for the stand-in's untrusted-server test.
    ///   - port: 0 lets the system choose a free one.
    /// - Throws: ``AppleStandIn/StandInError`` when the server does not start, or what `body` throws.
    static func run<T: Sendable>(
        _ router: Router<BasicRequestContext>,
        name: String,
        server: HTTPServerBuilder = .http1(),
        port: Int = 0,
        _ body: @Sendable (Int) async throws -> T
    ) async throws -> T {
        try await TestServerSlots.withSlot {
            let (ports, continuation) = AsyncStream<Int>.makeStream()
            let app = Application(
                router: router,
                server: server,
                configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: port), serverName: name),
                onServerRunning: { channel in
                    continuation.yield(channel.localAddress?.port ?? 0)
                    continuation.finish()
                },
                logger: Logger(label: "storegate.test-server", factory: { _ in SwiftLogNoOpLogHandler() })
            )
            return try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    defer { continuation.finish() }  // a server that fails to start ends the wait below
                    try await app.run()
                }
                var bound: Int?
                for await port in ports {
                    bound = port
                    break
                }
                guard let bound, bound > 0 else {
                    group.cancelAll()
                    try await group.waitForAll()
                    throw AppleStandIn.StandInError("the \(name) did not start")
                }
                do {
                    let result = try await body(bound)
                    group.cancelAll()
                    return result
                } catch {
                    group.cancelAll()
                    throw error
                }
            }
        }
    }
}

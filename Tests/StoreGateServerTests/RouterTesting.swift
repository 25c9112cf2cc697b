import Hummingbird
import HummingbirdTesting
import Logging
import ServiceLifecycle

/// An application as HummingbirdTesting sees it in ``ApplicationProtocol/testRouter(_:)``: the
/// same router, no services (they run beside it).
private struct ServicesApart<App: ApplicationProtocol>: ApplicationProtocol {
    let app: App

    var responder: App.Responder {
        get async throws { try await app.responder }
    }
    var configuration: ApplicationConfiguration { app.configuration }
    var logger: Logger { app.logger }
    var processesRunBeforeServerStart: [@Sendable () async throws -> Void] { app.processesRunBeforeServerStart }
}

/// Says when the service group started, then waits for its graceful shutdown.
private struct StartedSignal: Service {
    let continuation: AsyncStream<Void>.Continuation

    func run() async throws {
        continuation.yield()
        continuation.finish()
        try await gracefulShutdown()
    }
}

extension ApplicationProtocol where Responder.Context: InitializableFromSource<ApplicationRequestContextSource> {
    /// `test(.router)`, with the app's services run in a service group that traps no signal.
    ///
    /// HummingbirdTesting runs an app's services in a `ServiceGroup` trapping SIGTERM and SIGINT:
    /// two libdispatch signal sources created and cancelled per test. With eighty such tests at
    /// once while Foundation's SIGCHLD source takes the exits of child processes, libdispatch
    /// on Linux crashed (illegal instruction in `_dispatch_source_refs_finalize_unregistration`,
    /// a release run of the suite). A test needs no signal handling: its group ends when the
    /// test does.
    func testRouter<Value: Sendable>(_ test: @Sendable (any TestClientProtocol) async throws -> Value) async throws -> Value {
        let services = self.services
        let apart = ServicesApart(app: self)
        guard !services.isEmpty else { return try await apart.test(.router, test) }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            let (started, continuation) = AsyncStream.makeStream(of: Void.self)
            let serviceGroup = ServiceGroup(
                configuration: .init(services: services + [StartedSignal(continuation: continuation)], gracefulShutdownSignals: [], logger: logger)
            )
            group.addTask { try await serviceGroup.run() }
            await started.first { _ in true }
            do {
                let value = try await apart.test(.router, test)
                await serviceGroup.triggerGracefulShutdown()
                return value
            } catch {
                await serviceGroup.triggerGracefulShutdown()
                throw error
            }
        }
    }
}

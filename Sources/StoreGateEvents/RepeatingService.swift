import ServiceLifecycle

extension Service {
    /// Runs `tick` at once and then every `interval` until graceful shutdown (or cancellation):
    /// the loop of the services that look for work on a timer (the subscription clock, retention).
    func repeatEvery(_ interval: Duration, _ tick: @escaping @Sendable () async -> Void) async {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                await tick()
                try? await Task.sleep(for: interval)
            }
        }
    }
}

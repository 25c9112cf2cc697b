import Foundation
import Logging
import MetricsTestKit
import StoreGateCore
@testable import StoreGateEvents
import StoreGateHTTP
@testable import StoreGateLedger
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Testing

@Suite("Webhook endpoints: 410 Gone and secret rotation")
struct WebhookGoneTests {
    static let logger = Logger(label: "storegate.test", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Every round reads the endpoint's state from the ledger (no caching), so each step below
    /// sees the last one's effect.
    static var policy: WebhookDeliveryPolicy {
        var policy = WebhookDeliveryTests.fastPolicy
        policy.stateInterval = .zero
        policy.attemptTimeout = .seconds(30)
        return policy
    }

    /// Rounds until one sends nothing more (at most `rounds`).
    static func drain(_ service: WebhookDeliveryService, _ endpoint: WebhookEndpoint, rounds: Int = 50) async throws {
        for _ in 0..<rounds {
            if try await service.deliverOnce(endpoint) == 0 { return }
        }
    }

    @Test("410 disables the endpoint: the delivery stays pending, nothing more is sent (after a restart too) until it is enabled; then each account's deliveries resume in order")
    func goneDisablesUntilEnabled() async throws {
        let directory = try TemporaryFiles.directory("webhooks-gone")
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("ledger.sqlite").path
        let ledger = try SQLiteLedger(path: path)
        let transport = AsyncHTTPClientTransport(logger: Self.logger)
        let metrics = TestMetrics()
        try await WebhookReceiver.run(secret: WebhookDeliveryTests.secret) { receiver in
            let endpoint = try WebhookEndpoint(name: "app", url: receiver.url, secret: WebhookDeliveryTests.secret)
            let service = WebhookDeliveryService(
                store: ledger, endpoints: [endpoint], transport: transport, policy: Self.policy, addressPolicy: .allowingEveryAddress, holder: "one", logger: Self.logger, metrics: metrics
            )
            try await service.deliverOnce(endpoint)  // the endpoint starts here
            try await WebhookDeliveryTests.record(ledger, accounts: 3, perAccount: 3, prefix: "gone")
            let all = try await ledger.events(after: 0, limit: 100)
            #expect(all.count == 9)

            receiver.setMode(.gone)
            // One round: the oldest event of each account is sent, answered 410, and the endpoint is disabled.
            try await service.deliverOnce(endpoint)
            #expect(receiver.received.count == 3)
            #expect(receiver.received.allSatisfy { $0.status == 410 && $0.signatureValid && $0.standardSignatureValid })
            let state = try await WebhookEndpointState.of("app", in: ledger)
            guard case .disabled(let disabling?) = state else {
                Issue.record("the endpoint is not disabled in the ledger: \(state)")
                return
            }
            #expect(disabling.status == 410 && disabling.holder == "one")
            #expect(receiver.received.map(\.sequence).contains(disabling.sequence))
            #expect(try metrics.expectGauge("storegate_webhook_endpoint_disabled", [("endpoint", "app")]).lastValue == 1)
            #expect(try metrics.expectCounter("storegate_webhook_attempts_total", [("endpoint", "app"), ("outcome", "disabled")]).totalValue == 3)

            // The deliveries stay pending (not failed), their retry window not started.
            let pending = try await ledger.deliveries(endpoint: "app", status: nil, after: 0, limit: 100)
            #expect(pending.count == 9 && pending.allSatisfy { $0.status == .pending })
            let answered = pending.filter { $0.lastStatus == 410 }
            #expect(answered.count == 3 && answered.allSatisfy { $0.attempts == 1 && $0.firstAttemptAt == nil && $0.lastError != nil })

            // Nothing more is sent: not by this deliverer, nor by another instance, nor after a restart;
            // new events still become pending deliveries.
            receiver.setMode(.healthy)
            try await Self.drain(service, endpoint)
            let other = WebhookDeliveryService(store: ledger, endpoints: [endpoint], transport: transport, policy: Self.policy, addressPolicy: .allowingEveryAddress, holder: "two", logger: Self.logger)
            try await Self.drain(other, endpoint)
            await ledger.close()
            let reopened = try SQLiteLedger(path: path)
            let restarted = WebhookDeliveryService(store: reopened, endpoints: [endpoint], transport: transport, policy: Self.policy, addressPolicy: .allowingEveryAddress, holder: "three", logger: Self.logger)
            try await WebhookDeliveryTests.record(reopened, accounts: 1, perAccount: 2, prefix: "later")
            try await Self.drain(restarted, endpoint)
            #expect(receiver.received.count == 3, "sent while disabled: \(receiver.received.dropFirst(3).map(\.sequence))")
            #expect(try await reopened.deliveryCounts()["app"]?[.pending] == 11)
            #expect(try await WebhookEndpointState.all(in: reopened)["app"]?.isDisabled == true)

            // Enabled by hand: everything is delivered, each account's in order, the held ones first.
            #expect(try await WebhookEndpointState.enable("app", in: reopened, holder: "operator", now: Date()) == .enabled(wasDisabled: true))
            #expect(try await WebhookEndpointState.enable("app", in: reopened, holder: "operator", now: Date()) == .enabled(wasDisabled: false))
            try await Self.drain(restarted, endpoint)
            let delivered = try await reopened.deliveries(endpoint: "app", status: .delivered, after: 0, limit: 100)
            #expect(delivered.count == 11)
            let resumed = receiver.received.dropFirst(3)
            #expect(resumed.count == 11 && resumed.allSatisfy { $0.status == 200 && $0.signatureValid && $0.standardSignatureValid })
            for (account, copies) in Dictionary(grouping: resumed, by: \.account) {
                let sequences = copies.map(\.sequence)
                #expect(sequences == sequences.sorted(), "account \(account) got \(sequences)")
            }
            let firstOfEach = Set(Dictionary(grouping: resumed, by: \.account).values.compactMap { $0.first?.sequence })
            #expect(Set(answered.map(\.sequence)).isSubset(of: firstOfEach))
            // The held deliveries went again as their second attempt.
            #expect(delivered.filter { Set(answered.map(\.sequence)).contains($0.sequence) }.allSatisfy { $0.attempts == 2 })
            try await restarted.recordBacklog()
            await reopened.close()
        }
        try await transport.shutdown()
    }

    @Test("a deliverer that read 'enabled' a moment ago learns of a 410 from the ledger once its state interval passes; its own 410 stops it at once")
    func stateInterval() async throws {
        let ledger = InMemoryLedger()
        let transport = AsyncHTTPClientTransport(logger: Self.logger)
        try await WebhookReceiver.run(secret: WebhookDeliveryTests.secret) { receiver in
            let endpoint = try WebhookEndpoint(name: "app", url: receiver.url, secret: WebhookDeliveryTests.secret)
            var cached = Self.policy
            cached.stateInterval = .seconds(3600)
            let service = WebhookDeliveryService(store: ledger, endpoints: [endpoint], transport: transport, policy: cached, addressPolicy: .allowingEveryAddress, logger: Self.logger)
            #expect(try await service.state(of: endpoint) == .enabled)
            let disabling = WebhookEndpointDisabling(disabledAt: Date(), status: 410, sequence: 1, eventId: "e", holder: "elsewhere")
            #expect(try await WebhookEndpointState.disable("app", disabling, in: ledger, holder: "elsewhere", now: Date()))
            #expect(try await service.state(of: endpoint) == .enabled)  // cached
            var fresh = Self.policy
            fresh.stateInterval = .zero
            let other = WebhookDeliveryService(store: ledger, endpoints: [endpoint], transport: transport, policy: fresh, addressPolicy: .allowingEveryAddress, logger: Self.logger)
            #expect(try await other.state(of: endpoint) == .disabled(disabling))
            // The cached deliverer sends, gets 410 itself, and stops at once.
            try await other.deliverOnce(endpoint)
            try await WebhookDeliveryTests.record(ledger, accounts: 2, perAccount: 1, prefix: "cached")
            receiver.setMode(.gone)
            try await Self.drain(service, endpoint)
            #expect(receiver.received.count == 2 && receiver.received.allSatisfy { $0.status == 410 })
            #expect(try await service.state(of: endpoint).isDisabled)
        }
        try await transport.shutdown()
    }

    @Test("an endpoint's state that another instance holds cannot be enabled until its lease ends")
    func busy() async throws {
        let ledger = InMemoryLedger()
        let now = Date()
        _ = try await ledger.acquireLease(on: WebhookEndpointState.state(of: "app").name, holder: "deliverer", now: now, lease: .seconds(30))
        guard case .busy(let until?) = try await WebhookEndpointState.enable("app", in: ledger, holder: "operator", now: now) else {
            Issue.record("enabling a held state did not answer busy")
            return
        }
        #expect(abs(until.timeIntervalSince(now) - 30) < 1)
        #expect(try await WebhookEndpointState.enable("app", in: ledger, holder: "operator", now: now.addingTimeInterval(31)) == .enabled(wasDisabled: false))
    }

    @Test("a stored state that does not decode still disables the endpoint (fail closed)")
    func corruptState() async throws {
        let ledger = InMemoryLedger()
        let name = WebhookEndpointState.state(of: "app").name
        _ = try await ledger.acquireLease(on: name, holder: "x", now: Date(), lease: .seconds(1))
        #expect(try await ledger.saveLeasedState(name, value: "not json", holder: "x", now: Date(), lease: .seconds(1)))
        #expect(try await WebhookEndpointState.of("app", in: ledger) == .disabled(nil))
        #expect(try await WebhookEndpointState.all(in: ledger) == ["app": .disabled(nil)])
        #expect(try await WebhookEndpointState.of("app2", in: ledger) == .enabled)
    }

    @Test("with two secrets every delivery verifies with either one alone, in both schemes")
    func rotation() async throws {
        let ledger = InMemoryLedger()
        let transport = AsyncHTTPClientTransport(logger: Self.logger)
        let old = "whsec_test-secret-0123456789"
        let new = WebhookSecret.generate()
        try await WebhookReceiver.run(secret: old) { oldReceiver in
            try await WebhookReceiver.run(secret: new) { newReceiver in
                let endpoints = [
                    try WebhookEndpoint(name: "old", url: oldReceiver.url, secrets: [old, new]),
                    try WebhookEndpoint(name: "new", url: newReceiver.url, secrets: [old, new]),
                ]
                let service = WebhookDeliveryService(store: ledger, endpoints: endpoints, transport: transport, policy: Self.policy, addressPolicy: .allowingEveryAddress, logger: Self.logger)
                for endpoint in endpoints { try await service.deliverOnce(endpoint) }
                try await WebhookDeliveryTests.record(ledger, accounts: 2, perAccount: 2, prefix: "rotation")
                for endpoint in endpoints { try await Self.drain(service, endpoint) }
                for receiver in [oldReceiver, newReceiver] {
                    #expect(receiver.received.count == 4)
                    #expect(receiver.received.allSatisfy { $0.status == 200 && $0.signatureValid && $0.standardSignatureValid })
                }
            }
        }
        try await transport.shutdown()
    }
}

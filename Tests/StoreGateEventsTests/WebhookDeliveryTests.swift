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

@Suite("Webhook delivery")
struct WebhookDeliveryTests {
    static let secret = "whsec_test-secret-0123456789"
    static let logger = Logger(label: "storegate.test", factory: { _ in SwiftLogNoOpLogHandler() })

    static var fastPolicy: WebhookDeliveryPolicy {
        var policy = WebhookDeliveryPolicy()
        policy.attemptTimeout = .milliseconds(300)
        policy.firstRetry = .milliseconds(10)
        policy.maximumRetryInterval = .milliseconds(80)
        policy.pollInterval = .milliseconds(10)
        policy.batchSize = 16
        return policy
    }

    @Test("retries back off exponentially with jitter, up to the maximum, and fail once past the window")
    func backoff() {
        let policy = WebhookDeliveryPolicy()
        let start = Date(timeIntervalSince1970: 1_800_000_000)
        func delay(_ attempts: Int, random: Double) -> TimeInterval? {
            if case .retry(let next, _, _) = policy.failure(attempts: attempts, firstAttemptAt: start, now: start, status: 500, error: "HTTP 500", random: random) {
                return next.timeIntervalSince(start)
            }
            return nil
        }
        func approximately(_ value: TimeInterval?, _ expected: TimeInterval) -> Bool {
            value.map { abs($0 - expected) < 0.001 } ?? false
        }
        #expect(approximately(delay(0, random: 1), 10))
        #expect(approximately(delay(0, random: 0), 5))
        #expect(approximately(delay(1, random: 1), 20))
        #expect(approximately(delay(5, random: 1), 320))
        #expect(approximately(delay(20, random: 1), 6 * 3600))
        #expect(approximately(delay(30, random: 0.5), 0.75 * 6 * 3600))
        let late = start.addingTimeInterval(3 * 86_400 - 60)
        #expect(policy.failure(attempts: 40, firstAttemptAt: start, now: late, status: nil, error: "timed out", random: 0) == .failed(status: nil, error: "timed out"))
        #expect(policy.failure(attempts: 1, firstAttemptAt: nil, now: late, status: 502, error: "HTTP 502", random: 1)
                    == .retry(next: late.addingTimeInterval(20), status: 502, error: "HTTP 502"))
    }

    @Test("endpoints are validated", arguments: [
        ("", "https://example.com/hook", "0123456789abcdef"), ("bad name", "https://example.com/hook", "0123456789abcdef"),
        ("app", "ftp://example.com/hook", "0123456789abcdef"), ("app", "https://user:pw@example.com/hook", "0123456789abcdef"),
        ("app", "not a url", "0123456789abcdef"), ("app", "https://example.com/hook", "short"),
    ])
    func endpointValidation(_ name: String, _ url: String, _ secret: String) {
        #expect(throws: WebhookConfigurationError.self) { try WebhookEndpoint(name: name, url: url, secret: secret) }
    }

    @Test("plain http to another host is flagged; https and loopback are not")
    func clearTextWarning() throws {
        #expect(try WebhookEndpoint(name: "a", url: "http://backend.internal/hook", secret: Self.secret).sendsInClearOffHost)
        #expect(try !WebhookEndpoint(name: "a", url: "https://backend.internal/hook", secret: Self.secret).sendsInClearOffHost)
        #expect(try !WebhookEndpoint(name: "a", url: "http://127.0.0.1:9000/hook", secret: Self.secret).sendsInClearOffHost)
        #expect(try !WebhookEndpoint(name: "a", url: "http://localhost/hook", secret: Self.secret).sendsInClearOffHost)
    }

    /// Records `accounts` × `perAccount` changes: a credit, then consumptions.
    static func record(_ ledger: any Ledger, accounts: Int, perAccount: Int, prefix: String) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for account in 0..<accounts {
                group.addTask {
                    let id = try AccountID("\(prefix)-\(account)")
                    let credit = VerifiedTransaction(
                        environment: .production, bundleId: "com.example.app", transactionId: "\(prefix)-\(account)-credit",
                        originalTransactionId: "\(prefix)-\(account)-credit", productId: "coins", productType: .consumable,
                        quantity: perAccount, purchaseDate: Date(), originalPurchaseDate: nil, expiresDate: nil, revocationDate: nil,
                        revocationReason: nil, webOrderLineItemId: nil, subscriptionGroupIdentifier: nil, appAccountToken: nil,
                        isUpgraded: false, signedDate: Date(), source: .signedTransaction
                    )
                    try await ledger.record(
                        VerifiedProof(kind: .signedTransaction, environment: .production, bundleId: "com.example.app", signedDate: Date(),
                                      transactions: [credit], rawProof: Array("\(prefix)-\(account)".utf8)),
                        for: id)
                    for use in 1..<perAccount {
                        _ = try await ledger.consume("coins", quantity: 1, idempotencyKey: "use-\(use)", for: id, at: Date())
                    }
                }
            }
            try await group.waitForAll()
        }
    }

    /// Waits until every delivery of `endpoint` is delivered (or `timeout` passes).
    static func waitDelivered(_ store: any EventDeliveryStore, endpoint: String, count: Int, timeout: Duration = .seconds(60)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await store.deliveryCounts()[endpoint]?[.delivered] == count { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    @Test("a receiver that fails, stalls and answers slowly at random gets every event after it heals: in order per account, signed, duplicates with the same id")
    func chaos() async throws {
        let directory = try TemporaryFiles.directory("webhooks")
        defer { try? FileManager.default.removeItem(at: directory) }
        let ledger = try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path)
        let transport = AsyncHTTPClientTransport(logger: Self.logger)
        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            let endpoint = try WebhookEndpoint(name: "app", url: receiver.url, secret: Self.secret)
            let service = WebhookDeliveryService(store: ledger, endpoints: [endpoint], transport: transport, policy: Self.fastPolicy, addressPolicy: .allowingEveryAddress, logger: Self.logger)
            #expect(try await service.deliverOnce(endpoint) == 0)  // the endpoint starts here
            receiver.setMode(.chaos(failures: 0.3, stalls: 0.1, stall: .milliseconds(450), slow: 0.2, slowDelay: .milliseconds(40)))
            let running = Task { try await service.run() }
            try await Self.record(ledger, accounts: 12, perAccount: 6, prefix: "chaos")
            try await Task.sleep(for: .seconds(2))
            // The chaos lasts until it failed a request at least once (a loaded machine may make
            // few attempts in two seconds), within 30 s.
            let chaosDeadline = ContinuousClock.now + .seconds(30)
            while !receiver.received.contains(where: { $0.status == 500 }), ContinuousClock.now < chaosDeadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            receiver.setMode(.healthy)
            let all = try await ledger.events(after: 0, limit: 1000)
            #expect(all.count == 72)
            let done = try await Self.waitDelivered(ledger, endpoint: "app", count: all.count)
            running.cancel()
            _ = await running.result
            let counts = try await ledger.deliveryCounts()
            #expect(done, "not every delivery was delivered: \(counts)")

            let received = receiver.received
            #expect(received.allSatisfy { $0.signatureValid })
            #expect(received.contains { $0.status == 500 }, "the chaos never failed a request")
            #expect(received.count > all.count, "no retry happened")
            // Every event arrived with a 2xx, and every copy of one id is the same event.
            let accepted = Set(received.filter { $0.status == 200 }.map(\.id))
            #expect(accepted == Set(all.map(\.id)))
            let byId = Dictionary(grouping: received, by: \.id)
            for event in all {
                let copies = byId[event.id] ?? []
                #expect(copies.allSatisfy { $0.sequence == event.sequence && $0.type == event.type.rawValue && $0.account == event.account.rawValue })
                // Each copy is another attempt (a loaded machine may deliver a late one out of order).
                #expect(Set(copies.map(\.attempt)).count == copies.count && copies.allSatisfy { $0.attempt >= 1 }, "attempts of \(event.id): \(copies.map(\.attempt))")
            }
            // Per account, events first arrive in sequence order.
            for (account, copies) in Dictionary(grouping: received, by: \.account) {
                var seen: Set<String> = []
                let firsts = copies.filter { seen.insert($0.id).inserted }.map(\.sequence)
                #expect(firsts == firsts.sorted(), "account \(account) got \(firsts)")
            }
            let delivered = try await ledger.deliveries(endpoint: "app", status: .delivered, after: 0, limit: 1000)
            #expect(delivered.count == all.count)
            #expect(delivered.contains { $0.attempts > 1 })
        }
        try await transport.shutdown()
        await ledger.close()
    }

    @Test("the backlog gauge counts each endpoint's pending and failed deliveries; attempts are counted by outcome")
    func backlogGauge() async throws {
        let ledger = InMemoryLedger()
        let metrics = TestMetrics()
        var policy = Self.fastPolicy
        policy.retryWindow = .milliseconds(1)  // a failed attempt past the window fails the delivery
        // A port nothing listens on: every attempt fails.
        let transport = AsyncHTTPClientTransport(logger: Self.logger)
        let closed = try WebhookEndpoint(name: "closed", url: "http://127.0.0.1:9/hook", secret: Self.secret)
        let idle = try WebhookEndpoint(name: "idle", url: "http://127.0.0.1:9/idle", secret: Self.secret, types: ["transaction.revoked"])
        let service = WebhookDeliveryService(store: ledger, endpoints: [closed, idle], transport: transport, policy: policy, addressPolicy: .allowingEveryAddress, logger: Self.logger, metrics: metrics)
        func gauge(_ endpoint: String, _ status: String) throws -> Double? {
            try metrics.expectGauge("storegate_webhook_deliveries", [("endpoint", endpoint), ("status", status)]).lastValue
        }
        try await service.deliverOnce(closed)
        try await service.deliverOnce(idle)
        try await Self.record(ledger, accounts: 3, perAccount: 2, prefix: "gauge")
        _ = try await ledger.fanOut(endpoint: "closed", types: nil, limit: 1000, now: Date())
        try await service.recordBacklog()
        #expect(try gauge("closed", "pending") == 6)
        #expect(try gauge("closed", "failed") == 0)
        #expect(try gauge("idle", "pending") == 0)

        // One round: the first event of each account is attempted, fails, and is past the window.
        try await Task.sleep(for: .milliseconds(5))
        try await service.deliverOnce(closed)
        try await service.recordBacklog()
        #expect(try gauge("closed", "failed") == 3)
        #expect(try gauge("closed", "pending") == 3)
        #expect(try metrics.expectCounter("storegate_webhook_attempts_total", [("endpoint", "closed"), ("outcome", "failed")]).totalValue == 3)
        try await transport.shutdown()
    }

    @Test("two deliverers sharing one ledger send each event once when nothing fails; a type filter sends only its types")
    func twoDeliverers() async throws {
        let ledger = InMemoryLedger()
        let transport = AsyncHTTPClientTransport(logger: Self.logger)
        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            let endpoint = try WebhookEndpoint(name: "app", url: receiver.url, secret: Self.secret)
            let consumed = try WebhookEndpoint(name: "consumed", url: receiver.url, secret: Self.secret, types: ["consumable.consumed"])
            // Nothing may fail here, not even an attempt timing out on a loaded machine.
            var patient = Self.fastPolicy
            patient.attemptTimeout = .seconds(30)
            let one = WebhookDeliveryService(store: ledger, endpoints: [endpoint, consumed], transport: transport, policy: patient, addressPolicy: .allowingEveryAddress, holder: "one", logger: Self.logger)
            let two = WebhookDeliveryService(store: ledger, endpoints: [endpoint, consumed], transport: transport, policy: patient, addressPolicy: .allowingEveryAddress, holder: "two", logger: Self.logger)
            try await one.deliverOnce(endpoint)
            try await one.deliverOnce(consumed)
            let tasks = [Task { try await one.run() }, Task { try await two.run() }]
            try await Self.record(ledger, accounts: 8, perAccount: 5, prefix: "pair")
            let all = try await ledger.events(after: 0, limit: 1000)
            #expect(try await Self.waitDelivered(ledger, endpoint: "app", count: all.count))
            #expect(try await Self.waitDelivered(ledger, endpoint: "consumed", count: 32))
            for task in tasks { task.cancel() }
            for task in tasks { _ = await task.result }
            let received = receiver.received
            #expect(received.count == all.count + 32)
            let counts = Dictionary(grouping: received, by: \.id).mapValues(\.count)
            #expect(counts.values.filter { $0 > 2 }.isEmpty)
            #expect(Set(received.map(\.id)) == Set(all.map(\.id)))
        }
        try await transport.shutdown()
    }
}

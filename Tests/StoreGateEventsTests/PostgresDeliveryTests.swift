import Foundation
import Logging
import StoreGateCore
import StoreGateEvents
import StoreGateHTTP
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateTestSupport
import Testing

@Suite("Webhook delivery from two instances on PostgreSQL")
struct PostgresDeliveryTests {
    @Test("two instances on one database deliver every event once when nothing fails, per-account order kept",
          .enabled(if: TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired))
    func twoInstances() async throws {
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        do {
            let url = try await server.makeDatabase()
            // Two instances: two ledgers with their own pools, two deliverers.
            let first = try await PostgresLedger.connect(url: url, configuration: LedgerConfiguration(), maximumConnections: 6)
            let second = try await PostgresLedger.connect(url: url, configuration: LedgerConfiguration(), maximumConnections: 6)
            let transport = AsyncHTTPClientTransport(logger: WebhookDeliveryTests.logger)
            try await WebhookReceiver.run(secret: WebhookDeliveryTests.secret) { receiver in
                let endpoint = try WebhookEndpoint(name: "app", url: receiver.url, secret: WebhookDeliveryTests.secret)
                var policy = WebhookDeliveryTests.fastPolicy
                policy.attemptTimeout = .seconds(30)  // nothing may fail here
                let one = WebhookDeliveryService(store: first, endpoints: [endpoint], transport: transport, policy: policy, addressPolicy: .allowingEveryAddress, holder: "instance-1", logger: WebhookDeliveryTests.logger)
                let two = WebhookDeliveryService(store: second, endpoints: [endpoint], transport: transport, policy: policy, addressPolicy: .allowingEveryAddress, holder: "instance-2", logger: WebhookDeliveryTests.logger)
                try await one.deliverOnce(endpoint)
                let tasks = [Task { try await one.run() }, Task { try await two.run() }]
                // Changes arrive at both instances.
                async let a: Void = WebhookDeliveryTests.record(first, accounts: 6, perAccount: 5, prefix: "one")
                async let b: Void = WebhookDeliveryTests.record(second, accounts: 6, perAccount: 5, prefix: "two")
                _ = try await (a, b)
                // Numbering waits for every older write transaction of the server, other tests' too.
                try await first.settleEvents(within: .seconds(60))
                let all = try await first.events(after: 0, limit: 1000)
                #expect(all.count == 60)
                #expect(try await WebhookDeliveryTests.waitDelivered(first, endpoint: "app", count: all.count))
                for task in tasks { task.cancel() }
                for task in tasks { _ = await task.result }

                let received = receiver.received
                #expect(received.count == all.count, "\(received.count) requests for \(all.count) events")
                #expect(Set(received.map(\.id)) == Set(all.map(\.id)))
                #expect(received.allSatisfy { $0.signatureValid && $0.status == 200 })
                for (account, copies) in Dictionary(grouping: received, by: \.account) {
                    let sequences = copies.map(\.sequence)
                    #expect(sequences == sequences.sorted(), "account \(account) got \(sequences)")
                }
                // The ledger agrees: every delivery is recorded as delivered.
                let delivered = try await first.deliveries(endpoint: "app", status: .delivered, after: 0, limit: 1000)
                #expect(delivered.count == all.count)
            }
            try await transport.shutdown()
            await first.close()
            await second.close()
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    @Test("on PostgreSQL a 410 received by one instance disables the endpoint for the other too, until it is enabled",
          .enabled(if: TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired))
    func goneAcrossInstances() async throws {
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        do {
            let url = try await server.makeDatabase()
            let first = try await PostgresLedger.connect(url: url, configuration: LedgerConfiguration(), maximumConnections: 4)
            let second = try await PostgresLedger.connect(url: url, configuration: LedgerConfiguration(), maximumConnections: 4)
            let transport = AsyncHTTPClientTransport(logger: WebhookDeliveryTests.logger)
            try await WebhookReceiver.run(secret: WebhookDeliveryTests.secret) { receiver in
                let endpoint = try WebhookEndpoint(name: "app", url: receiver.url, secret: WebhookDeliveryTests.secret)
                let one = WebhookDeliveryService(store: first, endpoints: [endpoint], transport: transport, policy: WebhookGoneTests.policy, addressPolicy: .allowingEveryAddress, holder: "instance-1", logger: WebhookDeliveryTests.logger)
                let two = WebhookDeliveryService(store: second, endpoints: [endpoint], transport: transport, policy: WebhookGoneTests.policy, addressPolicy: .allowingEveryAddress, holder: "instance-2", logger: WebhookDeliveryTests.logger)
                try await one.deliverOnce(endpoint)
                try await WebhookDeliveryTests.record(first, accounts: 2, perAccount: 2, prefix: "pg-gone")
                try await first.settleEvents(within: .seconds(60))
                receiver.setMode(.gone)
                try await one.deliverOnce(endpoint)
                #expect(receiver.received.count == 2 && receiver.received.allSatisfy { $0.status == 410 })
                receiver.setMode(.healthy)
                try await WebhookGoneTests.drain(two, endpoint)
                try await WebhookGoneTests.drain(one, endpoint)
                #expect(receiver.received.count == 2)
                let held = try await second.deliveries(endpoint: "app", status: .pending, after: 0, limit: 100).filter { $0.lastStatus == 410 }
                #expect(held.count == 2 && held.allSatisfy { $0.attempts == 1 && $0.firstAttemptAt == nil })

                #expect(try await WebhookEndpointState.enable("app", in: second, holder: "operator", now: Date()) == .enabled(wasDisabled: true))
                try await WebhookGoneTests.drain(two, endpoint)
                #expect(try await second.deliveries(endpoint: "app", status: .delivered, after: 0, limit: 100).count == 4)
                #expect(receiver.received.dropFirst(2).allSatisfy { $0.status == 200 && $0.signatureValid && $0.standardSignatureValid })
            }
            try await transport.shutdown()
            await first.close()
            await second.close()
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
}

import Foundation
import HTTPTypes
import HummingbirdTesting
import Logging
import StoreGateCore
import StoreGateEvents
import StoreGateLedger
import StoreGateTestSupport
import Testing

@testable import StoreGateServer

/// Keys and endpoints managed live are shared by every instance of one database: SQLite (two
/// processes' worth of ledgers on one file) and PostgreSQL.
@Suite("Live administration across two instances", .serialized)
struct LiveAdminInstancesTests {
    enum Backend: String, CaseIterable, CustomTestStringConvertible {
        case sqlite, postgres
        var testDescription: String { rawValue }
    }

    static var backends: [Backend] {
        TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired ? [.sqlite, .postgres] : [.sqlite]
    }

    /// Runs `body` with two applications on one fresh database of `backend`.
    static func withTwoInstances(
        _ backend: Backend, configure: (inout ServerConfiguration) -> Void = { _ in },
        _ body: @Sendable (StoreGateApplication, StoreGateApplication) async throws -> Void
    ) async throws {
        var configuration = try LiveAdminTests.configuration()
        configure(&configuration)
        var server: TemporaryPostgres?
        var directory: URL?
        switch backend {
        case .sqlite:
            let folder = try TemporaryFiles.directory("live-admin")
            directory = folder
            configuration.database = .sqlite(path: folder.appendingPathComponent("ledger.sqlite").path)
        case .postgres:
            let launched = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
            server = launched
            configuration.database = .postgres(url: try await launched.makeDatabase())
        }
        defer {
            server?.stop()
            if let directory { try? FileManager.default.removeItem(at: directory) }
        }
        var logger = Logger(label: "storegate.tests")
        logger.logLevel = .critical
        let a = TestData.application(configuration, opened: try LedgerOpener.open(configuration, logger: logger))
        let b = TestData.application(configuration, opened: try LedgerOpener.open(configuration, logger: logger))
        try await body(a, b)
    }

    @Test("a key created on one instance works on the other; revoked on one, the other refuses it within a second", arguments: backends)
    func revocation(backend: Backend) async throws {
        try await Self.withTwoInstances(backend) { appA, appB in
            try await appA.testRouter { a in
                try await appB.testRouter { b in
                    let created = try await a.send(
                        .post, "/v1/keys", key: LiveAdminTests.adminKey, body: try TestData.json(["name": "service", "permissions": ["entitlements.read"]])
                    )
                    #expect(created.status == .created)
                    let secret = try #require(try created.json["secret"] as? String)
                    #expect(try await b.send(.get, "/v1/accounts/x/entitlements", key: secret).status == .ok, "B read the key and cached it")

                    #expect(try await a.send(.post, "/v1/keys/service/revoke", key: LiveAdminTests.adminKey).status == .ok)
                    #expect(try await a.send(.get, "/v1/accounts/x/entitlements", key: secret).status == .unauthorized, "refused at once where it was revoked")
                    // B trusts what it read for one second at most.
                    try await Task.sleep(for: .milliseconds(1100))
                    let refused = try await b.send(.get, "/v1/accounts/x/entitlements", key: secret)
                    #expect(refused.status == .unauthorized)
                    #expect(refused.code == "unauthorized")

                    let listed = try await b.send(.get, "/v1/keys", key: LiveAdminTests.adminKey)
                    let service = (try listed.json["keys"] as? [[String: Any]])?.first { $0["name"] as? String == "service" }
                    #expect(service?["state"] as? String == "revoked")
                    #expect(service?["lastUsedAt"] as? String != nil)
                }
            }
        }
    }

    /// How many rounds the instance's endpoint supervisor (`webhooks_endpoints`, which follows
    /// the ledger's endpoints) has completed, from `/readyz`.
    static func supervisorRounds(_ client: some TestClientProtocol) async throws -> Int {
        let workers = member(try await client.send(.get, "/readyz").json, "checks", "workers", "workers") as? [[String: Any]] ?? []
        return workers.first { $0["name"] as? String == "webhooks_endpoints" }?["rounds"] as? Int ?? -1
    }

    @Test("an endpoint added on one instance is delivered to by whichever instance claims; paused on one, no instance sends", arguments: backends)
    func sharedEndpoints(backend: Backend) async throws {
        try await WebhookReceiver.run(secret: LiveWebhookEndpointTests.secret) { receiver in
            try await Self.withTwoInstances(backend, configure: { $0.webhookPolicy = LiveWebhookEndpointTests.fastPolicy() }) { appA, appB in
                try await appA.testRouter { a in
                    try await appB.testRouter { b in
                        let created = try await a.send(
                            .post, "/v1/webhooks/endpoints", key: LiveAdminTests.hooksKey,
                            body: try TestData.json(["name": "shared", "url": receiver.url, "secrets": [LiveWebhookEndpointTests.secret]])
                        )
                        #expect(created.status == .created)
                        // Both instances follow the ledger's endpoints. (Its place in the stream was set
                        // when it was created: what follows is delivered whenever their workers run.)
                        for client in [a, b] {
                            #expect(try await LiveWebhookEndpointTests.waitUntil {
                                try await client.send(.get, "/readyz").text.contains("webhooks/shared")
                            })
                        }
                        for (index, client) in [a, b].enumerated() {
                            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(
                                try TestData.receipt(transactionPrefix: "8\(index)000000"), account: "shared-\(index)"
                            ))
                        }
                        #expect(try await LiveWebhookEndpointTests.waitUntil {
                            Set(receiver.received.map(\.account)).isSuperset(of: ["shared-0", "shared-1"])
                        })
                        #expect(receiver.received.allSatisfy { $0.signatureValid && $0.standardSignatureValid })
                        let listed = try await b.send(.get, "/v1/webhooks/endpoints/shared", key: LiveAdminTests.hooksKey)
                        #expect(try listed.json["source"] as? String == "api")

                        // Everything owed so far delivered: no earlier event arrives late and counts
                        // as sent while paused.
                        #expect(try await LiveWebhookEndpointTests.waitUntil {
                            let one = try await a.send(.get, "/v1/webhooks/endpoints/shared", key: LiveAdminTests.hooksKey)
                            return member(try one.json, "backlog", "pending") as? Int == 0
                        }, "the events before the pause are delivered")

                        // Paused through B: after both instances saw it (each one's endpoint
                        // supervisor completed two rounds since), nothing more is sent.
                        let roundsBefore = (a: try await Self.supervisorRounds(a), b: try await Self.supervisorRounds(b))
                        #expect(try await b.send(.patch, "/v1/webhooks/endpoints/shared", key: LiveAdminTests.hooksKey, body: try TestData.json(["paused": true])).status == .ok)
                        #expect(try await LiveWebhookEndpointTests.waitUntil {
                            let roundsA = try await Self.supervisorRounds(a)
                            let roundsB = try await Self.supervisorRounds(b)
                            return roundsA >= roundsBefore.a + 2 && roundsB >= roundsBefore.b + 2
                        }, "both instances followed the endpoints since the pause")
                        let before = receiver.received.count
                        try await a.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(
                            try TestData.receipt(transactionPrefix: "83000000"), account: "paused"
                        ))
                        #expect(try await LiveWebhookEndpointTests.waitUntil {
                            let one = try await a.send(.get, "/v1/webhooks/endpoints/shared", key: LiveAdminTests.hooksKey)
                            return (member(try one.json, "backlog", "pending") as? Int ?? 0) > 0
                        }, "the paused endpoint's events wait as pending deliveries")
                        #expect(receiver.received.count == before)
                        #expect(try await a.send(.patch, "/v1/webhooks/endpoints/shared", key: LiveAdminTests.hooksKey, body: try TestData.json(["paused": false])).status == .ok)
                        #expect(try await LiveWebhookEndpointTests.waitUntil { receiver.received.contains { $0.account == "paused" } })
                    }
                }
            }
        }
    }
}

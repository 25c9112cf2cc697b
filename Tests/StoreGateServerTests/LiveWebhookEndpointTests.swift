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

@Suite("Live administration: webhook endpoints through the API")
struct LiveWebhookEndpointTests {
    static let secret = "whsec_live-secret-0123456789"

    static func waitUntil(_ condition: () async throws -> Bool) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(20)
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(20))
        }
        return false
    }

    static func fastPolicy() -> WebhookDeliveryPolicy {
        var policy = WebhookDeliveryPolicy()
        policy.pollInterval = .milliseconds(10)
        policy.stateInterval = .milliseconds(50)
        policy.firstRetry = .milliseconds(20)
        return policy
    }

    @Test("create (a secret generated and shown once), read, pause, rotate, retire, delete; refusals by code; no secret in a list or a log")
    func lifecycle() async throws {
        let logs = RecordingLogs()
        let app = LiveAdminTests.application(try LiveAdminTests.configuration(), logs: logs)
        let hooks = LiveAdminTests.hooksKey
        try await app.testRouter { client in
            let created = try await client.send(
                .post, "/v1/webhooks/endpoints", key: hooks,
                body: try TestData.json(["name": "billing", "url": "https://billing.example.com/hooks?token=abc", "types": ["grant.created"]])
            )
            #expect(created.status == .created, "\(created.text)")
            let first = try #require(try created.json["secret"] as? String)
            #expect(first.hasPrefix("whsec_"))
            #expect(try created.json["secrets"] as? [String] == ["standard"])
            #expect(try created.json["url"] as? String == "https://billing.example.com/hooks?…", "a query may hold a token: it is not shown")
            #expect(try created.json["paused"] as? Bool == false)

            let given = try await client.send(
                .post, "/v1/webhooks/endpoints", key: hooks,
                body: try TestData.json(["name": "given", "url": "https://given.example.com/", "secrets": [Self.secret], "paused": true])
            )
            #expect(given.status == .created)
            #expect(try given.json["secret"] == nil, "a secret the caller gave is not echoed")

            let listed = try await client.send(.get, "/v1/webhooks/endpoints", key: hooks)
            #expect(listed.status == .ok)
            #expect(!listed.text.contains(first) && !listed.text.contains(Self.secret) && !listed.text.contains("token=abc"))
            let endpoints = try listed.json["endpoints"] as? [[String: Any]] ?? []
            #expect(endpoints.compactMap { $0["name"] as? String } == ["billing", "given"])
            #expect(member(endpoints.first, "backlog", "pending") as? Int == 0)
            #expect(endpoints.last?["paused"] as? Bool == true)

            func patch(_ name: String, _ body: [String: Any]) async throws -> TestResponse {
                try await client.send(.patch, "/v1/webhooks/endpoints/\(name)", key: hooks, body: try TestData.json(body))
            }
            let rotated = try await patch("billing", ["rotateSecret": true])
            #expect(rotated.status == .ok, "\(rotated.text)")
            let second = try #require(try rotated.json["secret"] as? String)
            #expect(second != first)
            #expect(try rotated.json["secrets"] as? [String] == ["standard", "standard"], "the old secret keeps signing")
            #expect(try rotated.json["revision"] as? Int == 2)
            let retired = try await patch("billing", ["retireOldSecrets": true, "paused": true, "types": NSNull()])
            #expect(try retired.json["secrets"] as? [String] == ["standard"])
            #expect(try retired.json["paused"] as? Bool == true)
            #expect(try retired.json["types"] == nil, "null sends every type again")
            #expect(try retired.json["secret"] == nil)
            let one = try await client.send(.get, "/v1/webhooks/endpoints/billing", key: hooks)
            #expect(try one.json["revision"] as? Int == 3)

            #expect(try await patch("billing", ["secret": "short"]).code == "webhook_secret_invalid")
            #expect(try await patch("billing", ["rotateSecret": true, "secret": Self.secret]).code == "invalid_field")
            #expect(try await patch("billing", ["types": []]).code == "invalid_field")
            #expect(try await patch("billing", ["colour": "red"]).code == "unknown_field")
            #expect(try await patch("missing", ["paused": false]).code == "webhook_endpoint_not_found")
            for _ in 0..<4 { _ = try await patch("billing", ["rotateSecret": true]) }
            #expect(try await patch("billing", ["rotateSecret": true]).code == "webhook_secret_invalid", "at most 5 secrets")

            let taken = try await client.send(.post, "/v1/webhooks/endpoints", key: hooks, body: try TestData.json(["name": "given", "url": "https://x.example.com/"]))
            #expect(taken.status == .conflict)
            #expect(taken.code == "webhook_endpoint_exists")
            #expect(try await client.send(.post, "/v1/webhooks/endpoints", key: hooks, body: try TestData.json(["name": "x", "url": "ftp://x.example.com/"])).code == "webhook_url_invalid")
            #expect(try await client.send(.post, "/v1/webhooks/endpoints", key: hooks, body: try TestData.json(["name": "x", "url": "https://x.example.com/", "secrets": ["short"]])).code == "webhook_secret_invalid")
            #expect(try await client.send(.post, "/v1/webhooks/endpoints", key: hooks, body: try TestData.json(["name": "bad name", "url": "https://x.example.com/"])).status == .badRequest)
            #expect(try await client.send(.post, "/v1/webhooks/endpoints", key: hooks, body: try TestData.json(["url": "https://x.example.com/"])).code == "missing_field")
            #expect(try await client.send(.get, "/v1/webhooks/endpoints", key: TestData.readerKey).status == .forbidden)
            #expect(try await client.send(.delete, "/v1/webhooks/endpoints/given", key: nil).status == .unauthorized)

            let deleted = try await client.send(.delete, "/v1/webhooks/endpoints/given", key: hooks)
            #expect(deleted.status == .ok)
            #expect(try deleted.json["deleted"] as? Bool == true)
            #expect(try await client.send(.delete, "/v1/webhooks/endpoints/given", key: hooks).code == "webhook_endpoint_not_found")
            #expect(try await client.send(.get, "/v1/webhooks/endpoints/given", key: hooks).code == "webhook_endpoint_not_found")
            #expect(try await client.send(.post, "/v1/webhooks/endpoints/given/test", key: hooks).code == "webhook_endpoint_not_found")
        }
        let lines = logs.all
        #expect(lines.contains { $0.contains("a webhook endpoint was created") })
        #expect(!lines.contains { $0.contains("whsec_") || $0.contains("token=abc") }, "no secret reaches a log line")
    }

    @Test("without STOREGATE_WEBHOOK_ALLOW_PRIVATE, URLs reaching the host or its networks are refused at creation and change", arguments: [
        "http://127.0.0.1:9/hook", "http://[::1]/hook", "http://localhost/hook", "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/hook", "http://192.168.1.1/hook", "http://[fd00::1]/hook", "http://[fe80::1]/hook", "http://100.64.0.1/hook",
        "http://0.0.0.0/hook", "http://224.0.0.1/hook", "http://[::ffff:127.0.0.1]/hook", "http://2130706433/hook",
    ])
    func serverSideRequestForgery(url: String) async throws {
        var configuration = try LiveAdminTests.configuration()
        configuration.webhookAddressPolicy = WebhookAddressPolicy()
        configuration.webhooks = [try WebhookEndpoint(name: "seeded", url: "https://seeded.example.com/", secret: Self.secret)]
        let app = LiveAdminTests.application(configuration)
        try await app.testRouter { client in
            let refused = try await client.send(.post, "/v1/webhooks/endpoints", key: LiveAdminTests.hooksKey, body: try TestData.json(["name": "internal", "url": url]))
            #expect(refused.status == .unprocessableContent, "\(url): \(refused.text)")
            #expect(refused.code == "webhook_address_forbidden")
            #expect(try refused.json["field"] as? String == "url")
            let changed = try await client.send(.patch, "/v1/webhooks/endpoints/seeded", key: LiveAdminTests.hooksKey, body: try TestData.json(["url": url]))
            #expect(changed.code == "webhook_address_forbidden")
            let listed = try await client.send(.get, "/v1/webhooks/endpoints", key: LiveAdminTests.hooksKey)
            #expect((try listed.json["endpoints"] as? [[String: Any]])?.compactMap { $0["url"] as? String } == ["https://seeded.example.com/"])
        }
    }

    @Test("an endpoint added through the API receives the events recorded after it, signed; a test event reaches it; deleted, it receives nothing more")
    func deliveredLive() async throws {
        try await WebhookReceiver.run(secret: Self.secret) { receiver in
            var configuration = try LiveAdminTests.configuration()
            configuration.webhookPolicy = Self.fastPolicy()
            let app = LiveAdminTests.application(configuration)
            try await app.test(.live) { client in
                let created = try await client.send(
                    .post, "/v1/webhooks/endpoints", key: LiveAdminTests.hooksKey,
                    body: try TestData.json(["name": "live", "url": receiver.url, "secrets": [Self.secret]])
                )
                #expect(created.status == .created)
                let test = try await client.send(.post, "/v1/webhooks/endpoints/live/test", key: LiveAdminTests.hooksKey)
                #expect(test.status == .ok)
                #expect(try test.json["delivered"] as? Bool == true, "\(test.text)")
                #expect(try test.json["status"] as? Int == 200)
                #expect(receiver.received.first?.type == "webhook.test")
                #expect(receiver.received.first?.signatureValid == true)
                #expect(receiver.received.first?.standardSignatureValid == true)

                // Recorded at once: the endpoint was placed at the end of the stream when it was
                // created, so this is delivered however late its worker's first round runs.
                try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey,
                                      body: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "77000000"), account: "lee"))
                #expect(try await Self.waitUntil { receiver.received.contains { $0.account == "lee" } })
                #expect(receiver.received.filter { $0.account == "lee" }.allSatisfy { $0.signatureValid && $0.standardSignatureValid })

                #expect(try await client.send(.delete, "/v1/webhooks/endpoints/live", key: LiveAdminTests.hooksKey).status == .ok)
                #expect(try await Self.waitUntil {
                    let reply = try await client.send(.get, "/readyz")
                    return !reply.text.contains("webhooks/live")
                })
                let before = receiver.received.count
                try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey,
                                      body: try TestData.verifyBody(try TestData.receipt(transactionPrefix: "78000000"), account: "max"))
                try await Task.sleep(for: .milliseconds(500))
                #expect(receiver.received.count == before, "a deleted endpoint receives nothing")
            }
        }
    }

    @Test("the configured endpoints are seeded once: a restart neither duplicates them nor undoes a change made through the API")
    func seeding() async throws {
        var configuration = try LiveAdminTests.configuration()
        configuration.webhooks = [try WebhookEndpoint(name: "file", url: "https://file.example.com/", secret: Self.secret)]
        let ledger = InMemoryLedger(configuration: LedgerConfiguration(catalog: configuration.catalog))
        var logger = Logger(label: "storegate.tests")
        logger.logLevel = .critical
        try await seedWebhookEndpoints(configuration.webhooks, into: ledger, at: Date(), logger: logger)
        var stored = try #require(try await ledger.webhookEndpoints().first)
        #expect(stored.source == .configuration)
        stored.isPaused = true
        #expect(try await ledger.updateWebhookEndpoint(stored, expectedRevision: 1))
        try await seedWebhookEndpoints(configuration.webhooks, into: ledger, at: Date(), logger: logger)
        // A (re)start seeds again: nothing changes.
        let app = buildApplication(configuration: configuration, ledger: ledger, logger: logger)
        try await app.testRouter { client in
            let listed = try await client.send(.get, "/v1/webhooks/endpoints", key: LiveAdminTests.hooksKey)
            let endpoints = try listed.json["endpoints"] as? [[String: Any]] ?? []
            #expect(endpoints.count == 1)
            #expect(endpoints.first?["source"] as? String == "configuration")
            #expect(endpoints.first?["paused"] as? Bool == true, "the change made through the API stays")
            #expect(endpoints.first?["revision"] as? Int == 2)
        }
    }
}

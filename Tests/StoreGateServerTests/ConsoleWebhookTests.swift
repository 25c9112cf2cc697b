import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import StoreGateLedger
import Testing

import StoreGateTestSupport
@testable import StoreGateServer

/// The System page's webhook endpoints: listed with their backlog, added, paused and rotated
/// through CSRF-checked forms, by a key with `webhooks.manage` only.
@Suite("The web console: webhook endpoints on the System page")
struct ConsoleWebhookTests {
    @Test("add shows the secret once; pause and rotate change the stored endpoint; forms need the CSRF token and webhooks.manage")
    func forms() async throws {
        var configuration = try TestData.configuration()
        var keys = configuration.apiKeys
        try keys.add(name: "viewer", secret: "viewer-key-0123456789abcdef", permissions: [.console])
        configuration.apiKeys = keys
        let (app, ledger) = TestData.application(configuration)
        try await app.testRouter { client in
            let (_, signedIn) = try await ConsoleTests.signIn(client)
            let browser = try #require(signedIn)
            let empty = try await client.execute(uri: "/console/system", method: .get, headers: browser.headers, body: nil)
            #expect(empty.text.contains("action=\"/console/system/webhooks\""))

            var (headers, body) = browser.form(["name": "crm", "url": "https://crm.example.com/hook?token=t0p", "types": "grant.created"])
            #expect(try await client.execute(uri: "/console/system/webhooks", method: .post, headers: headers, body: body).status == .forbidden)
            #expect(try await ledger.webhookEndpoints().isEmpty)
            (headers, body) = browser.form(["name": "crm", "url": "https://crm.example.com/hook?token=t0p", "types": "grant.created", "csrf": browser.csrf])
            let added = try await client.execute(uri: "/console/system/webhooks", method: .post, headers: headers, body: body)
            #expect(added.status == .ok)
            let stored = try #require(try await ledger.webhookEndpoints().first)
            #expect(stored.types == ["grant.created"])
            #expect(added.text.contains(stored.secrets[0]), "the generated secret is shown once")

            let page = try await client.execute(uri: "/console/system", method: .get, headers: browser.headers, body: nil)
            #expect(page.text.contains("crm"))
            #expect(!page.text.contains(stored.secrets[0]) && !page.text.contains("t0p"), "the list shows neither the secret nor the URL's query")
            #expect(page.text.contains("/console/system/webhooks/crm/pause"))

            (headers, body) = browser.form(["paused": "1", "csrf": browser.csrf])
            #expect(try await client.execute(uri: "/console/system/webhooks/crm/pause", method: .post, headers: headers, body: body).status == .seeOther)
            #expect(try await ledger.webhookEndpoints().first?.isPaused == true)
            (headers, body) = browser.form(["csrf": browser.csrf])
            let rotated = try await client.execute(uri: "/console/system/webhooks/crm/rotate", method: .post, headers: headers, body: body)
            #expect(rotated.status == .ok)
            let after = try #require(try await ledger.webhookEndpoints().first)
            #expect(after.secrets.count == 2)
            #expect(after.secrets[1] == stored.secrets[0], "the old secret keeps signing")
            #expect(rotated.text.contains(after.secrets[0]))
            (headers, body) = browser.form(["name": "crm", "url": "https://crm.example.com/", "csrf": browser.csrf])
            #expect(try await client.execute(uri: "/console/system/webhooks", method: .post, headers: headers, body: body).status == .conflict)
            (headers, body) = browser.form(["paused": "1", "csrf": browser.csrf])
            #expect(try await client.execute(uri: "/console/system/webhooks/nope/pause", method: .post, headers: headers, body: body).status == .notFound)

            // A console key without webhooks.manage sees no form and cannot post one.
            let (_, viewerSignedIn) = try await ConsoleTests.signIn(client, key: "viewer-key-0123456789abcdef")
            let viewer = try #require(viewerSignedIn)
            let viewed = try await client.execute(uri: "/console/system", method: .get, headers: viewer.headers, body: nil)
            #expect(viewed.text.contains("crm"))
            #expect(!viewed.text.contains("action=\"/console/system/webhooks\""))
            (headers, body) = viewer.form(["csrf": viewer.csrf])
            #expect(try await client.execute(uri: "/console/system/webhooks/crm/rotate", method: .post, headers: headers, body: body).status == .forbidden)
            #expect(try await ledger.webhookEndpoints().first?.secrets.count == 2)
        }
    }
}

import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import StoreGateLedger
import Testing

@testable import StoreGateServer

/// The console's move form and the transfers in the timelines (issue 28 item 4).
@Suite("Console transfers")
struct ConsoleTransferTests {
    static let verify = "/v1/receipts/verify"

    @Test("the account page's move form moves a purchase here (CSRF-protected, transfers.manage only); both timelines show the move, who and why")
    func moveForm() async throws {
        var configuration = try TestData.entitlementsConfiguration()
        var keys = configuration.apiKeys
        try keys.add(name: "viewer", secret: "viewer-key-0123456789abcdef", permissions: [.console, .grantsManage])
        configuration.apiKeys = keys
        let (app, ledger) = TestData.application(configuration)
        let receipt = try TestData.receipt(transactionPrefix: "17000000")
        try await app.testRouter { client in
            try await client.send(.post, Self.verify, key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "kim"))
            let (_, signedIn) = try await ConsoleTests.signIn(client)
            let browser = try #require(signedIn)
            let page = try await client.execute(uri: "/console/accounts/lee", method: .get, headers: browser.headers, body: nil)
            #expect(page.text.contains(#"<h2 id="transfers">Move a purchase here</h2>"#))
            #expect(page.text.contains(#"form method="post" action="/console/accounts/lee/transfers""#))

            let fields = ["environment": "Test", "originalTransactionId": "1700000000000002", "reason": "ticket 12"]
            var (headers, body) = browser.form(fields)
            #expect(try await client.execute(uri: "/console/accounts/lee/transfers", method: .post, headers: headers, body: body).status == .forbidden)
            #expect(try await ledger.transaction("1700000000000002", in: .test)?.account?.rawValue == "kim")
            (headers, body) = browser.form(fields.merging(["csrf": browser.csrf]) { $1 })
            let moved = try await client.execute(uri: "/console/accounts/lee/transfers", method: .post, headers: headers, body: body)
            #expect(moved.status == .seeOther)
            #expect(moved.headers[.location] == "/console/accounts/lee#timeline")
            #expect(try await ledger.transaction("1700000000000002", in: .test)?.account?.rawValue == "lee")

            let lee = try await client.execute(uri: "/console/accounts/lee", method: .get, headers: browser.headers, body: nil)
            #expect(lee.text.contains("Purchase moved here"))
            #expect(lee.text.contains("from account kim"))
            #expect(lee.text.contains("“ticket 12” by full"))
            let kim = try await client.execute(uri: "/console/accounts/kim", method: .get, headers: browser.headers, body: nil)
            #expect(kim.text.contains("Purchase moved to another account"))
            #expect(kim.text.contains("to account lee"))

            // Refusals come back as pages, and move nothing.
            (headers, body) = browser.form(["environment": "Test", "originalTransactionId": "nope", "reason": "x", "csrf": browser.csrf])
            let missing = try await client.execute(uri: "/console/accounts/lee/transfers", method: .post, headers: headers, body: body)
            #expect(missing.status == .notFound)
            #expect(missing.text.contains("No such purchase"))
            (headers, body) = browser.form(["environment": "Test", "originalTransactionId": "1700000000000001", "reason": "", "csrf": browser.csrf])
            #expect(try await client.execute(uri: "/console/accounts/lee/transfers", method: .post, headers: headers, body: body).status == .badRequest)
            #expect(try await ledger.transaction("1700000000000001", in: .test)?.account?.rawValue == "kim")

            // A console key without transfers.manage (grants.manage is not it) sees no form and cannot post one.
            let (_, viewerSignedIn) = try await ConsoleTests.signIn(client, key: "viewer-key-0123456789abcdef")
            let viewer = try #require(viewerSignedIn)
            let viewed = try await client.execute(uri: "/console/accounts/kim", method: .get, headers: viewer.headers, body: nil)
            #expect(!viewed.text.contains("transfer-form"))
            #expect(viewed.text.contains("class=\"grant-form\""), "the grant form, which grants.manage allows")
            (headers, body) = viewer.form(["environment": "Test", "originalTransactionId": "1700000000000001", "reason": "x", "csrf": viewer.csrf])
            #expect(try await client.execute(uri: "/console/accounts/kim/transfers", method: .post, headers: headers, body: body).status == .forbidden)
            #expect(try await ledger.transaction("1700000000000001", in: .test)?.account?.rawValue == "kim")
        }
    }
}

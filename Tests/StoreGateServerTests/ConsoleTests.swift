import Crypto
import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import StoreGateLedger
import Testing

import StoreGateTestSupport
@testable import StoreGateConsole
@testable import StoreGateServer

/// The web console through the router: sign-in and sessions, CSRF, headers, escaping, what a
/// page may show, and paging a long timeline. (A real browser runs the README's story in
/// `Scripts/console_browser_test.py`.)
@Suite("The web console")
struct ConsoleTests {
    /// A signed-in browser: its session cookie and the session's CSRF token.
    struct Browser {
        var cookie: String
        var csrf: String

        var headers: HTTPFields { [.cookie: cookie] }

        func form(_ fields: [String: String], extra: HTTPFields = [:]) -> (HTTPFields, ByteBuffer) {
            var headers = self.headers
            headers[.contentType] = "application/x-www-form-urlencoded"
            for field in extra { headers.append(field) }
            return (headers, ByteBuffer(string: ConsoleTests.encode(fields)))
        }
    }

    static func encode(_ fields: [String: String]) -> String {
        fields.sorted { $0.key < $1.key }.map { key, value in
            "\(key)=\(value.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        }.joined(separator: "&")
    }

    /// The value of `name="csrf" value="…"` in a page.
    static func csrf(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    /// The `name=value` of the first Set-Cookie for `name`, and the whole header.
    static func setCookie(_ response: TestResponse, _ name: String) -> (pair: String, header: String)? {
        for field in response.headers where field.name == .setCookie && field.value.hasPrefix("\(name)=") {
            return (String(field.value.prefix { $0 != ";" }), field.value)
        }
        return nil
    }

    static func signIn(_ client: some TestClientProtocol, key: String = TestData.fullKey, extra: HTTPFields = [:]) async throws -> (TestResponse, Browser?) {
        let form = try await client.execute(uri: "/console/signin", method: .get, headers: extra, body: nil)
        let token = try #require(csrf(in: form.text))
        let signInCookie = try #require(setCookie(form, ConsoleSecurity.signInCookie))
        var headers = extra
        headers[.cookie] = signInCookie.pair
        headers[.contentType] = "application/x-www-form-urlencoded"
        let response = try await client.execute(
            uri: "/console/signin", method: .post, headers: headers, body: ByteBuffer(string: encode(["csrf": token, "key": key, "next": "/console"]))
        )
        guard let session = setCookie(response, ConsoleSecurity.sessionCookie), session.pair != "\(ConsoleSecurity.sessionCookie)=" else {
            return (response, nil)
        }
        let overview = try await client.execute(uri: "/console", method: .get, headers: [.cookie: session.pair], body: nil)
        guard let token = csrf(in: overview.text) else {
            throw TestFailure("the overview after sign-in has no CSRF token: \(overview.status) \(overview.headers) \(overview.text.prefix(300))")
        }
        return (response, Browser(cookie: session.pair, csrf: token))
    }

    @Test("sign-in takes only a key with the console permission, behind its own form token, and sets a strict cookie")
    func signIn() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            // No session: pages redirect to sign-in, posts are refused.
            let page = try await client.execute(uri: "/console/accounts/alice?before=5", method: .get, headers: [:], body: nil)
            #expect(page.status == .seeOther)
            #expect(page.headers[.location] == "/console/signin?next=/console/accounts/alice%3Fbefore%3D5")
            #expect(try await client.execute(uri: "/console/inspect", method: .post, headers: [:], body: ByteBuffer(string: "proof=x")).status == .forbidden)
            let forged = try await client.execute(uri: "/console", method: .get, headers: [.cookie: "\(ConsoleSecurity.sessionCookie)=AAAA"], body: nil)
            #expect(forged.status == .seeOther)

            // A key without the console permission, and an unknown key.
            let (reader, noSession) = try await Self.signIn(client, key: TestData.readerKey)
            #expect(reader.status == .unauthorized)
            #expect(noSession == nil)
            #expect(reader.text.contains("not an API key with the console permission"))
            #expect(try await Self.signIn(client, key: "unknown-key-0123456789abcdef").0.status == .unauthorized)

            // The sign-in form's token must come back with its cookie.
            let form = try await client.execute(uri: "/console/signin", method: .get, headers: [:], body: nil)
            let token = try #require(Self.csrf(in: form.text))
            let withoutCookie = try await client.execute(
                uri: "/console/signin", method: .post, headers: [.contentType: "application/x-www-form-urlencoded"],
                body: ByteBuffer(string: Self.encode(["csrf": token, "key": TestData.fullKey]))
            )
            #expect(withoutCookie.status == .forbidden)
            #expect(Self.setCookie(withoutCookie, ConsoleSecurity.sessionCookie) == nil)

            // The right key: a redirect and a strict cookie; plain http is not Secure.
            let (response, browser) = try await Self.signIn(client)
            #expect(response.status == .seeOther)
            #expect(response.headers[.location] == "/console")
            let cookie = try #require(Self.setCookie(response, ConsoleSecurity.sessionCookie)?.header)
            for attribute in ["HttpOnly", "SameSite=Strict", "Path=/console", "Max-Age=28800"] {
                #expect(cookie.contains(attribute), "\(attribute) in \(cookie)")
            }
            #expect(!cookie.contains("Secure"))
            #expect(cookie.count > "storegate_console=".count + 40, "a 256-bit session id")
            #expect(browser != nil)

            // Behind a TLS terminator the cookies are Secure.
            let (secure, _) = try await Self.signIn(client, extra: [HTTPField.Name("X-Forwarded-Proto")!: "https"])
            #expect(Self.setCookie(secure, ConsoleSecurity.sessionCookie)?.header.contains("; Secure") == true)
        }
    }

    @Test("a sign-in's next page stays inside the console", arguments: [
        ("/console/accounts/alice", "/console/accounts/alice"), ("//evil.example/console", "/console"),
        ("https://evil.example/console", "/console"), ("/console\\@evil.example", "/console"), ("/metrics", "/console"), (nil, "/console"),
    ] as [(String?, String)])
    func next(_ requested: String?, _ expected: String) {
        #expect(Console.safeNext(requested) == expected)
    }

    @Test("the account page shows entitlements first; the grant form grants in the key's name, the revoke button revokes; both are CSRF-checked and need grants.manage")
    func grantForm() async throws {
        var configuration = try TestData.entitlementsConfiguration()
        var keys = configuration.apiKeys
        try keys.add(name: "viewer", secret: "viewer-key-0123456789abcdef", permissions: [.console])
        configuration.apiKeys = keys
        let (app, ledger) = TestData.application(configuration)
        try await app.testRouter { client in
            let (_, signedIn) = try await Self.signIn(client)
            let browser = try #require(signedIn)
            let page = try await client.execute(uri: "/console/accounts/june", method: .get, headers: browser.headers, body: nil)
            #expect(page.text.contains(#"<h2 id="entitlements">Entitlements</h2>"#))
            #expect(page.text.contains("form method=\"post\" action=\"/console/accounts/june/grants\""))

            var (headers, body) = browser.form(["entitlement": "premium", "duration": "P7D", "reason": "goodwill"])
            #expect(try await client.execute(uri: "/console/accounts/june/grants", method: .post, headers: headers, body: body).status == .forbidden)
            #expect(try await ledger.grants(for: try AccountID("june")).isEmpty)
            (headers, body) = browser.form(["entitlement": "premium", "duration": "P7D", "reason": "goodwill", "csrf": browser.csrf])
            let granted = try await client.execute(uri: "/console/accounts/june/grants", method: .post, headers: headers, body: body)
            #expect(granted.status == .seeOther)
            #expect(granted.headers[.location] == "/console/accounts/june#grants")
            let grant = try #require(try await ledger.grants(for: try AccountID("june")).first)
            #expect(grant.entitlement == "premium" && grant.grantedBy == "full" && grant.reason == "goodwill")
            #expect(grant.expiresAt.timeIntervalSince(grant.startsAt) == 7 * 86_400)
            let after = try await client.execute(uri: "/console/accounts/june", method: .get, headers: browser.headers, body: nil)
            #expect(after.text.contains("/console/accounts/june/grants/\(grant.id)/revoke"))
            #expect(after.text.contains("Granted by hand"))

            (headers, body) = browser.form(["reason": "done", "csrf": browser.csrf])
            let revoked = try await client.execute(uri: "/console/accounts/june/grants/\(grant.id)/revoke", method: .post, headers: headers, body: body)
            #expect(revoked.status == .seeOther)
            #expect(try await ledger.grants(for: try AccountID("june")).first?.revokedBy == "full")

            // A console key without grants.manage sees no form and cannot post one.
            let (_, viewerSignedIn) = try await Self.signIn(client, key: "viewer-key-0123456789abcdef")
            let viewer = try #require(viewerSignedIn)
            let viewed = try await client.execute(uri: "/console/accounts/june", method: .get, headers: viewer.headers, body: nil)
            #expect(!viewed.text.contains("class=\"grant-form\""))
            (headers, body) = viewer.form(["entitlement": "premium", "duration": "P7D", "reason": "x", "csrf": viewer.csrf])
            #expect(try await client.execute(uri: "/console/accounts/june/grants", method: .post, headers: headers, body: body).status == .forbidden)
            #expect(try await ledger.grants(for: try AccountID("june")).count == 1)
        }
    }

    @Test("every page carries a strict CSP; every form post is CSRF-checked; sign-out ends the session")
    func csrfAndHeaders() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let (_, signedIn) = try await Self.signIn(client)
            let browser = try #require(signedIn)
            for path in ["/console", "/console/search?q=alice", "/console/accounts/alice", "/console/inspect", "/console/system", "/console/signin"] {
                let page = try await client.execute(uri: path, method: .get, headers: browser.headers, body: nil)
                #expect([.ok, .seeOther].contains(page.status), "\(path)")
                if page.status == .ok {
                    let csp = page.headers[.contentSecurityPolicy] ?? ""
                    #expect(csp.contains("default-src 'none'") && csp.contains("script-src 'self'") && csp.contains("frame-ancestors 'none'"), "\(path): \(csp)")
                    #expect(!csp.contains("unsafe-inline"))
                    #expect(page.headers[.xContentTypeOptions] == "nosniff")
                    #expect(page.headers[.cacheControl] == "no-store")
                    #expect(page.headers[HTTPField.Name("Referrer-Policy")!] == "same-origin")
                    #expect(page.headers[.contentType] == "text/html; charset=utf-8")
                    #expect(!page.text.contains("<script>"), "no inline script in \(path)")
                    #expect(!page.text.contains("style=\""), "no inline style in \(path)")
                }
            }
            // The forms: no token, a wrong token, another site's Origin, and another site's fetch.
            var (headers, body) = browser.form(["proof": "x"])
            #expect(try await client.execute(uri: "/console/inspect", method: .post, headers: headers, body: body).status == .forbidden)
            (headers, body) = browser.form(["proof": "x", "csrf": String(browser.csrf.reversed())])
            #expect(try await client.execute(uri: "/console/inspect", method: .post, headers: headers, body: body).status == .forbidden)
            (headers, body) = browser.form(["proof": "x", "csrf": browser.csrf], extra: [.origin: "http://evil.example"])
            #expect(try await client.execute(uri: "/console/inspect", method: .post, headers: headers, body: body).status == .forbidden)
            (headers, body) = browser.form(["proof": "x", "csrf": browser.csrf], extra: [ConsoleSecurity.secFetchSite: "cross-site"])
            #expect(try await client.execute(uri: "/console/inspect", method: .post, headers: headers, body: body).status == .forbidden)
            (headers, body) = browser.form(["proof": "x", "csrf": browser.csrf], extra: [.origin: "null"])
            #expect(try await client.execute(uri: "/console/inspect", method: .post, headers: headers, body: body).status == .forbidden)
            // What a browser sends with the console's own form: its fetch metadata decides.
            (headers, body) = browser.form(["proof": "x", "csrf": browser.csrf], extra: [ConsoleSecurity.secFetchSite: "same-origin", .origin: "null"])
            let inspected = try await client.execute(uri: "/console/inspect", method: .post, headers: headers, body: body)
            #expect(inspected.status == .ok)
            #expect(inspected.text.contains("INVALID"))

            // Sign-out needs the token too, then the cookie is cleared and no longer works.
            (headers, body) = browser.form([:])
            #expect(try await client.execute(uri: "/console/signout", method: .post, headers: headers, body: body).status == .forbidden)
            (headers, body) = browser.form(["csrf": browser.csrf])
            let signOut = try await client.execute(uri: "/console/signout", method: .post, headers: headers, body: body)
            #expect(signOut.status == .seeOther)
            #expect(Self.setCookie(signOut, ConsoleSecurity.sessionCookie)?.header.contains("Max-Age=0") == true)
            #expect(try await client.execute(uri: "/console", method: .get, headers: browser.headers, body: nil).status == .seeOther)
        }
    }

    @Test("names and search terms with markup are escaped everywhere they appear")
    func escaping() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let account = "<script>alert('x')</script>&\"q\""
            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(try TestData.receipt(), account: account))
            let browser = try #require(try await Self.signIn(client).1)
            let path = ConsoleViews.accountLink(try AccountID(account))
            let pages = [
                try await client.execute(uri: path, method: .get, headers: browser.headers, body: nil),
                try await client.execute(uri: "/console/search?q=\(ConsoleViews.segment(account))", method: .get, headers: browser.headers, body: nil),
                try await client.execute(uri: "/console/search?q=1000000000000001", method: .get, headers: browser.headers, body: nil),
                try await client.execute(uri: "/console/search?q=%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E", method: .get, headers: browser.headers, body: nil),
            ]
            for page in pages {
                #expect(page.status == .ok)
                #expect(!page.text.contains("<script>alert"), "raw markup in \(page.text.prefix(200))")
                #expect(!page.text.contains("<img src=x"))
            }
            #expect(pages[0].text.contains("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;q&quot;"))
            #expect(pages[1].text.contains("entitled to \(TestData.pro), \(TestData.coins)"))
            #expect(pages[2].text.contains("href=\"\(path)\""))
            #expect(pages[3].text.contains("&lt;img src=x onerror=alert(1)&gt;"))
            #expect(ConsoleViews.escape("<a href='x'>&\"</a>") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;")
        }
    }

    @Test("no page shows a whole proof or key: stored proofs are re-verified and described, never echoed")
    func secrets() async throws {
        var configuration = try TestData.configuration()
        configuration.encryption = try ProofEncryption(currentKeyID: "k1", keys: ["k1": SymmetricKey(size: .bits256)])
        let ledger = InMemoryLedger(configuration: LedgerConfiguration(catalog: configuration.catalog, encryption: configuration.encryption))
        let (app, _) = TestData.application(configuration, ledger: ledger)
        let receipt = Base64.encode(try TestData.receipt())
        let jws = try TestData.signedTransaction()
        try await app.testRouter { client in
            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.json(["receipt": receipt, "account": "alice"]))
            try await client.send(.post, "/v1/transactions/verify", key: TestData.fullKey, body: try TestData.json(["signedTransaction": jws, "account": "alice"]))
            let browser = try #require(try await Self.signIn(client).1)
            var pages: [String: TestResponse] = [:]
            for path in ["/console", "/console/accounts/alice", "/console/transactions/Test/1000000000000001", "/console/transactions/Test/2000000000000001", "/console/system"] {
                pages[path] = try await client.execute(uri: path, method: .get, headers: browser.headers, body: nil)
            }
            for (proof, name) in [(receipt, "receipt"), (jws, "jws")] {
                let (headers, body) = browser.form(["proof": proof, "csrf": browser.csrf])
                pages["inspect \(name)"] = try await client.execute(uri: "/console/inspect", method: .post, headers: headers, body: body)
            }
            let jwsParts = jws.split(separator: ".").map(String.init)
            for (path, page) in pages {
                #expect(page.status == .ok, "\(path)")
                let html = page.text
                #expect(!html.contains(TestData.fullKey), "\(path) shows the API key")
                #expect(!html.contains(receipt), "\(path) shows the whole receipt")
                #expect(!html.contains(String(receipt.prefix(64))), "\(path) shows the receipt's bytes")
                #expect(!html.contains(jws) && !html.contains(jwsParts[2]) && !html.contains(jwsParts[1]), "\(path) shows the JWS")
            }
            // The stored proofs re-verify on their transactions' pages; the inspector's verdicts.
            #expect(pages["/console/transactions/Test/1000000000000001"]?.text.contains("Verdict: <span class=\"badge good\">VALID") == true)
            #expect(pages["/console/transactions/Test/2000000000000001"]?.text.contains("Verdict: <span class=\"badge good\">VALID") == true)
            #expect(pages["inspect receipt"]?.text.contains("VALID") == true)
            #expect(pages["inspect receipt"]?.text.contains("&quot;bundle_id&quot; : &quot;com.example.storegate&quot;") == true)
            #expect(pages["inspect jws"]?.text.contains("&quot;transactionId&quot; : &quot;2000000000000001&quot;") == true)
            #expect(pages["/console/system"]?.text.contains(Fingerprint(of: try TestData.receiptAuthority.root.der).description) == true)
            #expect(pages["/console/system"]?.text.contains("Off: set the App Store Server API credentials") == true)
        }
    }

    @Test("a forged or broken proof in the inspector fails at the step that catches it")
    func inspectorVerdicts() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        var forged = try TestData.receipt()
        forged[forged.count / 2] ^= 0x01
        let jws = try TestData.signedTransaction()
        var tampered = Array(jws.utf8)
        tampered[tampered.count - 10] = tampered[tampered.count - 10] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let cases: [(String, String, String)] = [
            (Base64.encode(forged), "FAIL", "app receipt"),
            (String(decoding: tampered, as: UTF8.self), "FAIL", "StoreKit 2 JWS"),
            ("not a proof at all!", "FAIL", "unreadable input"),
            (try TestData.signedTransaction(bundleId: "com.other.app"), "FAIL", "StoreKit 2 JWS"),
        ]
        try await app.testRouter { client in
            let browser = try #require(try await Self.signIn(client).1)
            for (proof, status, kind) in cases {
                let (headers, body) = browser.form(["proof": proof, "csrf": browser.csrf])
                let page = try await client.execute(uri: "/console/inspect", method: .post, headers: headers, body: body)
                #expect(page.status == .ok)
                #expect(page.text.contains("badge bad\">INVALID"), "\(kind)")
                #expect(page.text.contains(">\(status)</span>"), "\(kind)")
                #expect(page.text.contains(kind), "\(kind)")
            }
        }
    }

    @Test("a 10,000-event timeline pages newest first, 100 at a time, every event once")
    func longTimeline() async throws {
        let configuration = try TestData.configuration()
        let ledger = InMemoryLedger(configuration: LedgerConfiguration(catalog: configuration.catalog))
        let (app, _) = TestData.application(configuration, ledger: ledger)
        let receipt = try TestData.receipt(purchases: [
            .init(productId: TestData.coins, transactionId: "5000000000000001", purchaseDate: TestData.created, quantity: 10_000)
        ])
        try await app.testRouter { client in
            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(receipt, account: "heavy"))
            let account = try AccountID("heavy")
            for index in 1...9_999 {
                try await ledger.consume(TestData.coins, quantity: 1, idempotencyKey: "k\(index)", for: account, at: Date())
            }
            let browser = try #require(try await Self.signIn(client).1)
            var path: String? = "/console/accounts/heavy"
            var sequences: [Int64] = []
            var pages = 0
            while let next = path {
                let page = try await client.execute(uri: next, method: .get, headers: browser.headers, body: nil)
                #expect(page.status == .ok)
                let html = page.text
                let found = html.components(separatedBy: "<span class=\"seq\">#").dropFirst().compactMap { Int64($0.prefix { $0.isNumber }) }
                #expect(found.count <= Console.timelinePage)
                sequences += found
                pages += 1
                path = html.range(of: "href=\"/console/accounts/heavy?before=").map { range in
                    "/console/accounts/heavy?before=" + html[range.upperBound...].prefix { $0.isNumber }
                }
            }
            #expect(pages == 100)
            #expect(sequences.count == 10_000)
            #expect(sequences == sequences.sorted(by: >))
            #expect(Set(sequences).count == 10_000)
            // Not a sequence: refused; the newest page has no "Newest" link, an older one has.
            #expect(try await client.execute(uri: "/console/accounts/heavy?before=0", method: .get, headers: browser.headers, body: nil).status == .badRequest)
            let older = try await client.execute(uri: "/console/accounts/heavy?before=5000", method: .get, headers: browser.headers, body: nil)
            #expect(older.text.contains(">Newest</a>"))
        }
    }

    @Test("a period that ended with no write shows on the timeline as a change that happened as time passed")
    func timeDrivenChange() async throws {
        let configuration = try TestData.configuration()
        let ledger = InMemoryLedger(configuration: LedgerConfiguration(catalog: configuration.catalog))
        let (app, _) = TestData.application(configuration, ledger: ledger)
        let end = Date().addingTimeInterval(3600).ledgerNormalized
        try await ledger.record(.subscriptionPeriod("5100000000000001", bundleId: TestData.bundleId, endingAt: end), for: try AccountID("ida"))
        #expect(try await ledger.emitElapsedTransitions(until: end.addingTimeInterval(60), limit: 10) == 1)
        try await app.testRouter { client in
            let browser = try #require(try await Self.signIn(client).1)
            let page = try await client.execute(uri: "/console/accounts/ida", method: .get, headers: browser.headers, body: nil)
            #expect(page.status == .ok)
            #expect(page.text.contains("active → expired"))
            #expect(page.text.contains("as time passed, at \(ConsoleViews.time(end))"))
            #expect(page.text.components(separatedBy: "via signed_transaction").count == 2, "only the purchase came from a proof")
        }
    }

    @Test("the overview charts 90 days as labelled inline SVG; the assets stay small")
    func overviewAndAssets() async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            try await client.send(.post, "/v1/receipts/verify", key: TestData.fullKey, body: try TestData.verifyBody(try TestData.receipt(), account: "alice"))
            let browser = try #require(try await Self.signIn(client).1)
            let overview = try await client.execute(uri: "/console", method: .get, headers: browser.headers, body: nil).text
            #expect(overview.components(separatedBy: "<svg class=\"chart").count - 1 == 4)
            #expect(overview.components(separatedBy: "role=\"img\"").count - 1 == 4)
            #expect(overview.contains("New purchases") && overview.contains("1 in 90 days"))
            var total = 0
            for asset in ["/console/assets/console.css", "/console/assets/console.js"] {
                let response = try await client.execute(uri: asset, method: .get, headers: [:], body: nil)
                #expect(response.status == .ok)
                total += response.body.readableBytes
            }
            #expect(total < 200_000, "console assets are \(total) bytes")
        }
    }
}

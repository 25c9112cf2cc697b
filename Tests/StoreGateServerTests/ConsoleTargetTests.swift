import HTTPTypes
import HummingbirdTesting
import Logging
import NIOCore
import StoreGateCore
import Testing

import StoreGateTestSupport
@testable import StoreGateConsole
@testable import StoreGateServer

/// The console as a target of its own: its files come from its resource bundle, its headers
/// from Hummingbird's middleware with the policy it always sent, and what it does not answer
/// with a page gets the API's error replies.
@Suite("The console target")
struct ConsoleTargetTests {
    @Test("every template, the stylesheet and the script are read from the resource bundle")
    func resources() {
        let resources = ConsoleResources.shared
        #expect(resources.missing.isEmpty, "missing: \(resources.missing)")
        for name in ConsoleResources.assetNames {
            #expect((resources.assets[name]?.count ?? 0) > 100, "\(name)")
        }
        // A page renders from the bundle's templates (header and footer partials included).
        let view: [String: Any] = ["layout": ["title": "T", "backend": "memory"] as [String: Any], "heading": "H", "message": "M"]
        let html = resources.library.render(view, withTemplate: "error")
        #expect(html?.hasPrefix("<!doctype html>") == true)
        #expect(html?.contains("<link rel=\"stylesheet\" href=\"/console/assets/console.css\">") == true)
        #expect(html?.hasSuffix("</html>") == true)
    }

    @Test("pages, assets and redirects carry the same Content-Security-Policy, once, and nosniff")
    func securityHeaders() async throws {
        let policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
        #expect(ConsoleSecurity.contentSecurityPolicy.description == policy)
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            for uri in ["/console/signin", "/console/assets/console.css", "/console/assets/console.js", "/console"] {
                let response = try await client.execute(uri: uri, method: .get, headers: [:], body: nil)
                #expect(response.headers[values: .contentSecurityPolicy] == [policy], "\(uri)")
                #expect(response.headers[values: .xContentTypeOptions] == ["nosniff"], "\(uri)")
            }
            let css = try await client.execute(uri: "/console/assets/console.css", method: .get, headers: [:], body: nil)
            #expect(css.headers[.contentType] == "text/css; charset=utf-8")
            #expect(css.headers[.cacheControl] == "public, max-age=3600")
            // The API's replies are not the console's: no policy added to them.
            let health = try await client.execute(uri: "/healthz", method: .get, headers: [:], body: nil)
            #expect(health.headers[.contentSecurityPolicy] == nil)
        }
    }

    @Test("a console request it does not answer with a page gets the API's error reply", arguments: [
        (ConsoleError(.formTooLarge, status: .contentTooLarge, reason: "a console form holds at most 16 bytes"), HTTPResponse.Status.contentTooLarge, APIErrorCode.bodyTooLarge),
        (ConsoleError(.invalidPathParameter, status: .badRequest, field: "endpoint", reason: "the path parameter 'endpoint' is not valid percent-encoded text"), .badRequest, .invalidPathParameter),
    ])
    func errorReplies(error: ConsoleError, status: HTTPResponse.Status, code: APIErrorCode) {
        let reply = APIError(console: error, logger: Logger(label: "storegate.tests"))
        #expect(reply.status == status)
        #expect(reply.code == code)
        #expect(reply.message == error.reason)
    }
}

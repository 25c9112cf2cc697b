import Foundation
import HTTPTypes
import Hummingbird
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
    func resources() throws {
        let resources = ConsoleResources.shared
        #expect(resources.problems.isEmpty, "problems: \(resources.problems)")
        #expect(resources.bundle.folder?.lastPathComponent == "StoreGate_StoreGateConsole.resources")
        for name in ConsoleResources.assetNames {
            #expect((resources.assets[name]?.count ?? 0) > 100, "\(name)")
        }
        // A page renders from the bundle's templates (header and footer partials included).
        let view: [String: Any] = ["layout": ["title": "T", "backend": "memory"] as [String: Any], "heading": "H", "message": "M"]
        let html = resources.render(view, template: "error")
        #expect(html?.hasPrefix("<!doctype html>") == true)
        #expect(html?.contains("<link rel=\"stylesheet\" href=\"/console/assets/console.css\">") == true)
        #expect(html?.hasSuffix("</html>") == true)
    }

    @Test("a bundle that is not installed leaves the console without templates or assets, and says where it was looked for")
    func bundleNotInstalled() throws {
        let nowhere = try TemporaryFiles.directory("console-nowhere")
        let bundle = ResourceBundle(name: "StoreGate_StoreGateConsole.resources", searchFolders: [nowhere, nowhere.appendingPathComponent("bin")])
        #expect(bundle.folder == nil)
        #expect(bundle.contents(of: "assets/console.css") == nil)
        let resources = ConsoleResources(bundle: bundle)
        #expect(resources.library == nil)
        #expect(resources.assets.isEmpty)
        #expect(resources.problems == ["StoreGate_StoreGateConsole.resources is not in \(nowhere.path) or \(nowhere.path)/bin"])
    }

    @Test("a bundle missing a file or holding a template that does not parse gives no page and no asset at all, and names each problem")
    func incompleteBundle() throws {
        let installed = try #require(ConsoleResources.bundle.folder)
        let folder = try TemporaryFiles.directory("console-partial")
        let copy = folder.appendingPathComponent("StoreGate_StoreGateConsole.resources")
        try FileManager.default.copyItem(at: installed, to: copy)
        try FileManager.default.removeItem(at: copy.appendingPathComponent("templates/footer.mustache"))
        try Data("{{#unclosed}}".utf8).write(to: copy.appendingPathComponent("templates/secret.mustache"))

        let resources = ConsoleResources(bundle: ResourceBundle(name: "StoreGate_StoreGateConsole.resources", searchFolders: [folder]))
        #expect(resources.library == nil, "never a page drawn from some of its parts")
        #expect(resources.assets.isEmpty)
        #expect(resources.problems.count == 2, "\(resources.problems)")
        #expect(resources.problems.first == "\(copy.path): templates/footer.mustache is missing")
        #expect(resources.problems.last?.hasPrefix("\(copy.path): templates/secret.mustache does not parse") == true)
    }

    @Test("the first folder holding the bundle is the one read: files never come from two")
    func oneFolder() throws {
        let installed = try #require(ConsoleResources.bundle.folder)
        let partial = try TemporaryFiles.directory("console-first")
        let complete = try TemporaryFiles.directory("console-second")
        let name = "StoreGate_StoreGateConsole.resources"
        try FileManager.default.createDirectory(at: partial.appendingPathComponent(name).appendingPathComponent("assets"), withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: installed.appendingPathComponent("assets/console.css"), to: partial.appendingPathComponent(name).appendingPathComponent("assets/console.css"))
        try FileManager.default.copyItem(at: installed, to: complete.appendingPathComponent(name))

        let bundle = ResourceBundle(name: name, searchFolders: [partial, complete])
        #expect(bundle.folder?.path == partial.appendingPathComponent(name).path)
        let resources = ConsoleResources(bundle: bundle)
        #expect(resources.library == nil)
        #expect(resources.problems.count == ConsoleResources.templateNames.count + 1, "\(resources.problems)")  // every template and the script
        #expect(ConsoleResources(bundle: ResourceBundle(name: name, searchFolders: [complete, partial])).problems.isEmpty)
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

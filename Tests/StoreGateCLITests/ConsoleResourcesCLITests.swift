import Foundation
import StoreGateTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `storegate serve` installed as deployment guides say (the binary and its resource folders) and
/// without its folders: the console's files come from `StoreGate_StoreGateConsole.resources`
/// beside the binary, and without them the API serves on while every console route answers 503
/// (never a crash, never a page drawn from some of its parts) and the log names the folder.
@Suite("storegate serve and its resource folders")
struct ConsoleResourcesCLITests {
    static let bundles = ["StoreGate_StoreGateConsole.resources", "StoreGate_StoreGateServer.resources"]

    @Test("without its resource folders the API answers, every console route answers 503 and the log says which folder is missing")
    func withoutResources() async throws {
        let folder = try Self.install(withResources: false)
        let serve = try await ServeProcess.start("console-missing", environment: ["STOREGATE_LOG_LEVEL": "info"], logToFile: true, binary: folder.appendingPathComponent("storegate"))
        defer { serve.stop() }

        // The API is not affected.
        let entitlements = try await serve.send("GET", "/v1/accounts/acct-1/entitlements")
        #expect(entitlements.status == 200)

        for (method, path) in [("GET", "/console/signin"), ("GET", "/console/assets/console.css"), ("GET", "/console/assets/console.js"), ("POST", "/console/signin"), ("GET", "/console")] {
            let reply = try await serve.fetch(method, path)
            #expect(reply.status == 503, "\(method) \(path)")
            #expect(reply.header("Content-Type") == "text/plain; charset=utf-8", "\(method) \(path)")
            #expect(reply.text.contains("StoreGate_StoreGateConsole.resources"), "\(method) \(path)")
            #expect(!reply.text.contains("<"), "\(method) \(path): no part of a page")
            // Where it was looked for is the log's to say, not a client's to learn.
            #expect(!reply.text.contains(folder.path), "\(method) \(path)")
            #expect(reply.header("Content-Security-Policy")?.contains("default-src 'none'") == true, "\(method) \(path)")
            #expect(reply.header("Set-Cookie") == nil, "\(method) \(path): no session or form cookie")
        }
        // /console needs a session: it sends the browser to the sign-in page, which answers 503.
        #expect(try await serve.fetch("GET", "/console").url.hasSuffix("/console/signin?next=/console"))

        let openAPI = try await serve.send("GET", "/openapi.yaml")
        #expect(openAPI.status == 404)

        let lines = serve.log.split(separator: "\n")
        let consoleLines = lines.filter { $0.contains("the web console is unavailable") }
        #expect(consoleLines.count == 1, "\(serve.log)")
        #expect(consoleLines.first?.contains("StoreGate_StoreGateConsole.resources is not in \(folder.path)") == true, "\(serve.log)")
        #expect(lines.filter { $0.contains("the OpenAPI document is missing") && $0.contains("StoreGate_StoreGateServer.resources") }.count == 1, "\(serve.log)")
    }

    @Test("installed with its resource folders beside it, the binary serves the console's pages and assets")
    func withResources() async throws {
        let folder = try Self.install(withResources: true)
        let serve = try await ServeProcess.start("console-installed", environment: ["STOREGATE_LOG_LEVEL": "info"], logToFile: true, binary: folder.appendingPathComponent("storegate"))
        defer { serve.stop() }

        let signIn = try await serve.fetch("GET", "/console/signin")
        #expect(signIn.status == 200)
        #expect(signIn.text.hasPrefix("<!doctype html>"))
        #expect(signIn.text.contains("<link rel=\"stylesheet\" href=\"/console/assets/console.css\">"))
        #expect(signIn.text.hasSuffix("</html>"))
        let css = try await serve.fetch("GET", "/console/assets/console.css")
        #expect(css.status == 200)
        #expect(css.header("Content-Type") == "text/css; charset=utf-8")
        #expect(css.text.contains(":root{"))
        #expect(try await serve.send("GET", "/openapi.yaml").status == 200)
        #expect(!serve.log.contains("the web console is unavailable"), "\(serve.log)")
        #expect(!serve.log.contains("the OpenAPI document is missing"), "\(serve.log)")
    }

    /// A folder holding the built binary under its own name (a hard link, or a copy across file
    /// systems) and, when asked, copies of its resource folders: what an install looks like.
    static func install(withResources: Bool) throws -> URL {
        let binary = try #require(CLI.binary, "the storegate binary is not built next to the tests")
        let folder = try TemporaryFiles.directory("install")
        let installed = folder.appendingPathComponent("storegate")
        do {
            try FileManager.default.linkItem(at: binary, to: installed)
        } catch {
            try FileManager.default.copyItem(at: binary, to: installed)
        }
        if withResources {
            for bundle in bundles {
                try FileManager.default.copyItem(at: binary.deletingLastPathComponent().appendingPathComponent(bundle), to: folder.appendingPathComponent(bundle))
            }
        }
        return folder
    }
}

extension ServeProcess {
    /// A reply with its headers and text, for the console's pages.
    struct PageReply {
        let status: Int
        /// The URL answered, after redirects.
        let url: String
        let headers: [String: String]
        let text: String

        /// A header's value, by case-insensitive name.
        func header(_ name: String) -> String? {
            headers.first { $0.key.caseInsensitiveCompare(name) == .orderedSame }?.value
        }
    }

    /// Sends a request as a browser would: no API key, redirects followed; a `POST` with an
    /// empty form.
    func fetch(_ method: String, _ path: String) async throws -> PageReply {
        var request = URLRequest(url: try #require(URL(string: "http://127.0.0.1:\(port)\(path)")))
        request.httpMethod = method
        request.timeoutInterval = 20
        request.httpShouldHandleCookies = false
        if method == "POST" {
            request.httpBody = Data()
            request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            headers["\(name)"] = "\(value)"
        }
        return PageReply(status: http.statusCode, url: http.url?.absoluteString ?? "", headers: headers, text: String(decoding: data, as: UTF8.self))
    }
}

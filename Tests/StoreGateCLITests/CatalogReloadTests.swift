import Foundation
import StoreGateTestSupport
import Testing

/// `storegate serve` reads its products file again on SIGHUP (issue 28).
@Suite("storegate serve: the catalog reloads on SIGHUP; storegate grant drives it")
struct CatalogReloadTests {
    @Test("SIGHUP applies a changed mapping to existing customers at once; a bad file keeps the old catalog")
    func reloadsOnSIGHUP() async throws {
        let serve = try await ServeProcess.start("catalog-reload") { directory in
            let products = directory.appendingPathComponent("products.json")
            try Data(#"{"entitlements": {"pro": {"products": ["something.else"]}}}"#.utf8).write(to: products)
            return ["STOREGATE_PRODUCTS_FILE": products.path]
        }
        let products = serve.directory.appendingPathComponent("products.json")
        defer { serve.stop() }
        let process = serve.process
        let port = serve.port
        #expect(try await serve.send("POST", "/v1/receipts/verify", body: try ServeProcess.receipt(0)).status == 200)
        func isActive() async throws -> Bool? {
            let reply = try await serve.send("GET", "/v1/accounts/disk-0/entitlements/pro")
            return (reply.json["entitlement"] as? [String: Any])?["isActive"] as? Bool
        }
        #expect(try await isActive() == false)

        // The mapping now names the product disk-0 bought: after SIGHUP disk-0 is entitled.
        try Data(#"{"entitlements": {"pro": {"products": ["com.example.storegate.pro"]}}}"#.utf8).write(to: products)
        kill(process.processIdentifier, SIGHUP)
        var active = false
        for _ in 0..<100 where !active {
            active = try await isActive() == true
            if !active { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(active, "the reloaded mapping did not apply")

        // A bad catalog is refused: the old one stays, and the service goes on.
        try Data(#"{"entitlements": {"pro": {"products": []}}}"#.utf8).write(to: products)
        kill(process.processIdentifier, SIGHUP)
        try await Task.sleep(for: .milliseconds(300))
        #expect(process.isRunning)
        #expect(try await isActive() == true)

        // storegate grant drives the same service: grant, list, revoke; a refusal exits 1.
        let cli = ["--url", "http://127.0.0.1:\(port)"]
        let key = ["STOREGATE_API_KEY": ServeProcess.key]
        let granted = try await CLI.run(["grant", "create", "disk-9", "pro", "--duration", "P7D", "--reason", "ticket 7"] + cli, environment: key)
        #expect(granted.status == 0, "\(granted.stderr)")
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(granted.stdout.utf8)) as? [String: Any])
        let grant = try #require(reply["grant"] as? [String: Any])
        let id = try #require(grant["id"] as? String)
        #expect(grant["grantedBy"] as? String == "serve")
        let entitled = try await serve.send("GET", "/v1/accounts/disk-9/entitlements/pro")
        #expect((entitled.json["entitlement"] as? [String: Any])?["isActive"] as? Bool == true)
        let listed = try await CLI.run(["grant", "list", "disk-9"] + cli, environment: key)
        #expect(listed.status == 0 && listed.stdout.contains(id))
        let revoked = try await CLI.run(["grant", "revoke", "disk-9", id, "--reason", "resolved"] + cli, environment: key)
        #expect(revoked.status == 0 && revoked.stdout.contains("\"revokedBy\":\"serve\""), "\(revoked.stdout)")
        let unknown = try await CLI.run(["grant", "create", "disk-9", "nothing", "--until", "2099-01-01T00:00:00Z", "--reason", "x"] + cli, environment: key)
        #expect(unknown.status == 1)
        #expect(unknown.stdout.contains("unknown_entitlement"))
        let noKey = try await CLI.run(["grant", "list", "disk-9"] + cli)
        #expect(noKey.status != 0)
    }
}

import Foundation
import StoreGateTestSupport
import Testing

/// `storegate keys` drives a running service's `/v1/keys`.
@Suite("storegate keys: create, list, revoke through a running service")
struct KeysCLITests {
    @Test("a key created by the CLI is printed once, works, is listed without its secret, and is refused once revoked")
    func lifecycle() async throws {
        let serve = try await ServeProcess.start("keys-cli")
        defer { serve.stop() }
        defer { try? FileManager.default.removeItem(at: serve.directory) }
        let port = serve.port

        let cli = ["--url", "http://127.0.0.1:\(port)"]
        let admin = ["STOREGATE_API_KEY": ServeProcess.key]
        let created = try await CLI.run(["keys", "create", "ops", "--permission", "keys.manage", "--rate-limit", "100/1"] + cli, environment: admin)
        #expect(created.status == 0, "\(created.stderr)")
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])
        let secret = try #require(reply["secret"] as? String)
        #expect(reply["createdBy"] as? String == "serve")

        let listed = try await CLI.run(["keys", "list"] + cli, environment: ["STOREGATE_API_KEY": secret])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("\"ops\"") && listed.stdout.contains("\"serve\""))
        #expect(!listed.stdout.contains(secret) && !listed.stdout.contains(ServeProcess.key))

        let taken = try await CLI.run(["keys", "create", "ops", "--permission", "events.read"] + cli, environment: admin)
        #expect(taken.status == 1)
        #expect(taken.stdout.contains("api_key_exists"))
        let noPermission = try await CLI.run(["keys", "create", "none"] + cli, environment: admin)
        #expect(noPermission.status != 0)

        let revoked = try await CLI.run(["keys", "revoke", "ops"] + cli, environment: admin)
        #expect(revoked.status == 0 && revoked.stdout.contains("\"revoked\""), "\(revoked.stdout)")
        let refused = try await CLI.run(["keys", "list"] + cli, environment: ["STOREGATE_API_KEY": secret])
        #expect(refused.status == 1)
        #expect(refused.stdout.contains("unauthorized"))
    }
}

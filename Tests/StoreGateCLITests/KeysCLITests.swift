import Foundation
import StoreGateTestSupport
import Testing

/// `storegate keys` drives a running service's `/v1/keys`.
@Suite("storegate keys: create, list, revoke through a running service")
struct KeysCLITests {
    @Test("a key created by the CLI is printed once, works, is listed without its secret, and is refused once revoked")
    func lifecycle() async throws {
        let binary = try #require(CLI.binary, "the storegate binary is not built next to the tests")
        let directory = try TemporaryFiles.directory("keys-cli")
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = try FreePort.next()
        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve"]
        var environment = ProcessInfo.processInfo.environment
        environment["STOREGATE_PORT"] = String(port)
        environment["STOREGATE_DATABASE"] = "sqlite:\(directory.appendingPathComponent("ledger.sqlite").path)"
        environment["STOREGATE_API_KEYS"] = "disk:\(DiskFullTests.key)"
        environment["STOREGATE_LOG_LEVEL"] = "critical"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }
        var ready = false
        for _ in 0..<100 where !ready {
            ready = (try? await DiskFullTests.send("GET", port, "/readyz"))?.status == 200
            if !ready { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(ready, "storegate serve did not become ready")

        let cli = ["--url", "http://127.0.0.1:\(port)"]
        let admin = ["STOREGATE_API_KEY": DiskFullTests.key]
        let created = try await CLI.run(["keys", "create", "ops", "--permission", "keys.manage", "--rate-limit", "100/1"] + cli, environment: admin)
        #expect(created.status == 0, "\(created.stderr)")
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(created.stdout.utf8)) as? [String: Any])
        let secret = try #require(reply["secret"] as? String)
        #expect(reply["createdBy"] as? String == "disk")

        let listed = try await CLI.run(["keys", "list"] + cli, environment: ["STOREGATE_API_KEY": secret])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("\"ops\"") && listed.stdout.contains("\"disk\""))
        #expect(!listed.stdout.contains(secret) && !listed.stdout.contains(DiskFullTests.key))

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

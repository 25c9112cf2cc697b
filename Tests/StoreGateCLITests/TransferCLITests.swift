import Foundation
import StoreGateTestSupport
import Testing

/// `storegate serve` with STOREGATE_TRANSFER_POLICY=transfer, and `storegate transfer` driving
/// it (issue 28 item 4).
@Suite("storegate serve moves a restored purchase under the transfer policy; storegate transfer moves one by hand")
struct TransferCLITests {
    @Test("a restore by another account moves the purchase; storegate transfer moves it back, again is a no-op, refusals exit 1")
    func transferPolicyAndCommand() async throws {
        let binary = try #require(CLI.binary, "the storegate binary is not built next to the tests")
        let directory = try TemporaryFiles.directory("transfer-cli")
        let trust = directory.appendingPathComponent("trust")
        try FileManager.default.createDirectory(at: trust, withIntermediateDirectories: true)
        try Data(try TestCertificateAuthority.shared(.rsa2048).root.der).write(to: trust.appendingPathComponent("root.der"))
        let port = try FreePort.next()

        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve", "--transfer-policy", "transfer"]
        var environment = ProcessInfo.processInfo.environment
        environment["STOREGATE_PORT"] = String(port)
        environment["STOREGATE_DATABASE"] = "sqlite:\(directory.appendingPathComponent("ledger.sqlite").path)"
        environment["STOREGATE_BUNDLE_IDS"] = DiskFullTests.bundleId
        environment["STOREGATE_TRUST_DIR"] = trust.path
        environment["STOREGATE_ENVIRONMENTS"] = "test"
        environment["STOREGATE_API_KEYS"] = "disk:\(DiskFullTests.key)"
        environment["STOREGATE_LOG_LEVEL"] = "critical"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        var ready = false
        for _ in 0..<200 where !ready {
            ready = (try? await DiskFullTests.send("GET", port, "/readyz"))?.status == 200  // not listening yet: try again
            if !ready { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(ready, "storegate serve did not become ready")
        func owns(_ account: String) async throws -> Bool {
            let reply = try await DiskFullTests.send("GET", port, "/v1/accounts/\(account)/entitlements")
            return (reply.json["entitledProductIds"] as? [String])?.contains("com.example.storegate.pro") == true
        }

        // disk-0 buys; disk-5 restores the same receipt: under --transfer-policy transfer it moves.
        var receipt = try DiskFullTests.receipt(0)
        #expect(try await DiskFullTests.send("POST", port, "/v1/receipts/verify", body: receipt).status == 200)
        receipt["account"] = "disk-5"
        let restored = try await DiskFullTests.send("POST", port, "/v1/receipts/verify", body: receipt)
        #expect(restored.status == 200)
        #expect((restored.json["recorded"] as? [String: Any])?["transferredOriginalTransactionIds"] as? [String] == ["93000000000000"])
        #expect(try await owns("disk-5"))
        #expect(try await !owns("disk-0"))

        // Support moves it back with the CLI.
        let cli = ["--url", "http://127.0.0.1:\(port)", "--environment", "test", "--reason", "ticket 8: wrong account"]
        let key = ["STOREGATE_API_KEY": DiskFullTests.key]
        let moved = try await CLI.run(["transfer", "disk-0", "93000000000000"] + cli, environment: key)
        #expect(moved.status == 0, "\(moved.stderr)")
        let reply = try #require(try JSONSerialization.jsonObject(with: Data(moved.stdout.utf8)) as? [String: Any])
        #expect(reply["isMoved"] as? Bool == true && reply["from"] as? String == "disk-5" && reply["to"] as? String == "disk-0")
        #expect(try await owns("disk-0"))
        #expect(try await !owns("disk-5"))
        let again = try await CLI.run(["transfer", "disk-0", "93000000000000"] + cli, environment: key)
        #expect(again.status == 0 && again.stdout.contains("\"isMoved\":false"), "\(again.stdout)")

        // The move is in the event stream, with the key's name and the reason.
        let events = try await DiskFullTests.send("GET", port, "/v1/events")
        let moves = (events.json["events"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "purchase.transferred" }
        #expect(moves.count == 4, "out and in for the restore, then for the move back")
        let last = try #require(moves.last?["transfer"] as? [String: Any])
        #expect(last["direction"] as? String == "in" && last["actor"] as? String == "disk" && last["reason"] as? String == "ticket 8: wrong account")

        let unknown = try await CLI.run(["transfer", "disk-0", "1"] + cli, environment: key)
        #expect(unknown.status == 1)
        #expect(unknown.stdout.contains("purchase_not_found"))
        let noKey = try await CLI.run(["transfer", "disk-0", "93000000000000"] + cli)
        #expect(noKey.status != 0)
        let noReason = try await CLI.run(["transfer", "disk-0", "93000000000000", "--url", "http://127.0.0.1:\(port)"], environment: key)
        #expect(noReason.status != 0, "--reason is required")
    }
}

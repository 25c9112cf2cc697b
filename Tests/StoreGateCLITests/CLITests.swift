import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

/// Runs the built `storegate` binary.
struct CLI {
    struct Result: Sendable {
        let status: Int32
        let stdout: String
        let stderr: String
    }

    static var binary: URL? {
        var candidates: [URL] = []
        let runner = URL(fileURLWithPath: CommandLine.arguments[0])
        candidates.append(runner.deletingLastPathComponent().appendingPathComponent("storegate"))
        candidates.append(Bundle.main.bundleURL.deletingLastPathComponent().appendingPathComponent("storegate"))
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }

    /// Runs `storegate` on a thread of its own (see ``runBlocking(_:)``): waiting for a child
    /// process must not hold a thread of the cooperative pool.
    static func run(_ arguments: [String], stdin: Data? = nil, environment: [String: String] = [:]) async throws -> Result {
        let binary = try #require(binary, "the storegate binary is not built next to the tests")
        return try await runBlocking { try runToEnd(binary, arguments, stdin: stdin, environment: environment) }
    }

    private static func runToEnd(_ binary: URL, _ arguments: [String], stdin: Data?, environment: [String: String]) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        }
        let output = Pipe()
        let error = Pipe()
        let input = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = input
        try process.run()
        if let stdin {
            input.fileHandleForWriting.write(stdin)
        }
        try input.fileHandleForWriting.close()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self))
    }

    static func temporaryFile(_ bytes: [UInt8], name: String) throws -> URL {
        try TemporaryFiles.file(bytes, name: name, prefix: "cli")
    }
}

@Suite("storegate CLI")
struct CLITests {
    @Test("input that is not a proof gives one clear line and exit 2, never a stack trace")
    func unusableInput() async throws {
        let cases: [([String], Data?)] = [
            (["inspect", "/nonexistent/receipt.der"], nil),
            (["verify", "/nonexistent/receipt.der", "--bundle-id", "com.example.app"], nil),
            (["inspect", "-"], Data("this is not base64!\n".utf8)),
            (["inspect", "-"], Data([0xDE, 0xAD, 0xBE, 0xEF, 0x00, 0x01])),
            (["inspect", "-"], Data()),
            (["verify", "-", "--bundle-id", "x"], Data(Base64.encode(Array("hello, not a receipt".utf8)).utf8)),
        ]
        for (arguments, stdin) in cases {
            let result = try await CLI.run(arguments, stdin: stdin)
            #expect(result.status == 2, "\(arguments): exit \(result.status)")
            let lines = result.stderr.split(separator: "\n")
            #expect(lines.count == 1, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("storegate: "))
            #expect(!result.stderr.contains("Fatal error") && !result.stderr.contains(".swift:"))
        }
    }

    @Test("a minted receipt verifies with its CA as an opt-in anchor and the Test environment accepted")
    func mintedReceipt() async throws {
        let authority = try TestCertificateAuthority.shared(.rsa2048)
        var payload = ReceiptMinter.Payload()
        payload.bundleId = "com.example.cli"
        payload.appVersion = "7"
        payload.purchases = [.init(productId: "coins", transactionId: "42", purchaseDate: Date(timeIntervalSince1970: 1_699_000_000))]
        let receipt = try ReceiptMinter(authority: authority).mint(payload)
        let file = try CLI.temporaryFile(receipt, name: "receipt.der")
        let trust = file.deletingLastPathComponent().appendingPathComponent("trust")
        try FileManager.default.createDirectory(at: trust, withIntermediateDirectories: true)
        try Data(authority.root.der).write(to: trust.appendingPathComponent("test-root.der"))

        let valid = try await CLI.run(["verify", file.path, "--bundle-id", "com.example.cli", "--app-version", "7", "--environment", "test", "--trust-dir", trust.path, "--transaction-id", "42"])
        #expect(valid.status == 0, "\(valid.stdout)\(valid.stderr)")
        #expect(valid.stdout.contains("VALID: com.example.cli in Test"))

        // Without the anchor the same receipt is refused at the chain step.
        let untrusted = try await CLI.run(["verify", file.path, "--bundle-id", "com.example.cli", "--environment", "test", "--json"])
        #expect(untrusted.status == 1)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(untrusted.stdout.utf8)) as? [String: Any])
        #expect(json["valid"] as? Bool == false)
        #expect((json["error"] as? [String: Any])?["code"] as? String == "chain_untrusted_root")

        // With the anchor but Test not accepted: an expectation fails, never a pass.
        let production = try await CLI.run(["verify", file.path, "--bundle-id", "com.example.cli", "--trust-dir", trust.path])
        #expect(production.status == 1)
        #expect(production.stdout.contains("environment_not_accepted"))

        // inspect reads base64 from standard input too.
        let inspected = try await CLI.run(["inspect", "-"], stdin: Data(Base64.encode(receipt).utf8))
        #expect(inspected.status == 0)
        let decoded = try #require(try JSONSerialization.jsonObject(with: Data(inspected.stdout.utf8)) as? [String: Any])
        let body = try #require(decoded["receipt"] as? [String: Any])
        #expect(body["bundle_id"] as? String == "com.example.cli")
        #expect((body["in_app"] as? [[String: Any]])?.first?["transaction_id"] as? String == "42")
    }

    @Test("a real receipt verifies at its creation date and fails checked now", .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)))
    func realReceipt() async throws {
        let path = try #require(Fixtures.url("receipts/kvitto-ios-sandbox-2015-05-23-sha1-1iap.der")).path
        let valid = try await CLI.run(["verify", path, "--bundle-id", "com.cocoanetics.EmmiView", "--app-version", "238"])
        #expect(valid.status == 0)
        #expect(valid.stdout.contains("PASS  chain"))
        let now = try await CLI.run(["verify", path, "--bundle-id", "com.cocoanetics.EmmiView", "--at", "now"])
        #expect(now.status == 1)
        #expect(now.stdout.contains("FAIL  chain        chain_not_valid_at_signing_time"))
        let other = try await CLI.run(["verify", path, "--bundle-id", "com.attacker.app"])
        #expect(other.status == 1)
        #expect(other.stdout.contains("bundle_id_mismatch"))
    }

    @Test("inspect and verify detect a JWS and report it", .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)))
    func realJWS() async throws {
        let path = try #require(Fixtures.url("jws/gopay-sandbox-2022-03-notification-did-renew.jws")).path
        let inspected = try await CLI.run(["inspect", path])
        #expect(inspected.status == 0)
        #expect(inspected.stdout.contains("DID_RENEW"))
        let verified = try await CLI.run(["verify", path, "--bundle-id", "com.audaos.audarecorder", "--json"])
        #expect(verified.status == 0, "\(verified.stdout)\(verified.stderr)")
        let wrong = try await CLI.run(["verify", path, "--bundle-id", "com.attacker.app"])
        #expect(wrong.status == 1)
    }
}

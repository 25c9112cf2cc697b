import Foundation
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `storegate serve` on SQLite when its files can no longer grow: a file size limit set on
/// the running process with `prlimit` (what a full disk looks like to SQLite: the write fails),
/// then lifted. Root ignores file permissions, so a limit is how a test makes the file
/// unwritable here.
@Suite("storegate serve: a SQLite file that cannot be written")
struct DiskFullTests {
    static let prlimit = ["/usr/bin/prlimit", "/bin/prlimit"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let key = "disk-key-0123456789abcdef"
    static let bundleId = "com.example.storegate"

    struct Reply {
        let status: Int
        let json: [String: Any]
        let elapsed: Duration
    }

    static func send(_ method: String, _ port: Int, _ path: String, body: [String: Any]? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 20
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = try JSONSerialization.data(withJSONObject: body)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let clock = ContinuousClock()
        let start = clock.now
        let (data, response) = try await URLSession.shared.data(for: request)
        let elapsed = clock.now - start
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let json = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]  // a test reading replies; the assertions name a missing body
        return Reply(status: status, json: json, elapsed: elapsed)
    }

    static func receipt(_ index: Int) throws -> [String: Any] {
        var payload = ReceiptMinter.Payload()
        payload.bundleId = bundleId
        payload.creationDate = Date(timeIntervalSince1970: 1_700_000_000)
        payload.purchases = [.init(productId: "com.example.storegate.pro", transactionId: String(93_000_000_000_000 + index), purchaseDate: Date(timeIntervalSince1970: 1_699_999_000))]
        let der = try ReceiptMinter(authority: try TestCertificateAuthority.shared(.rsa2048)).mint(payload)
        return ["receipt": Base64.encode(der), "account": "disk-\(index)"]
    }

    static func limitFileSize(of pid: Int32, to limit: String) async throws {
        let prlimit = try #require(Self.prlimit)
        let result = try await runBlocking { () throws -> Int32 in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: prlimit)
            process.arguments = ["--pid", String(pid), "--fsize=\(limit):unlimited"]
            try process.run()
            process.waitUntilExit()
            return process.terminationStatus
        }
        #expect(result == 0, "prlimit failed")
    }

    @Test("a write that cannot reach the file answers 503 retryable at once, /readyz says so, and both heal when the file can grow again; the file stays intact",
          .enabled(if: DiskFullTests.prlimit != nil, "prlimit (util-linux) is not installed"))
    func fileSizeLimit() async throws {
        let binary = try #require(CLI.binary, "the storegate binary is not built next to the tests")
        let directory = try TemporaryFiles.directory("disk")
        let trust = directory.appendingPathComponent("trust")
        try FileManager.default.createDirectory(at: trust, withIntermediateDirectories: true)
        try Data(try TestCertificateAuthority.shared(.rsa2048).root.der).write(to: trust.appendingPathComponent("root.der"))
        let database = directory.appendingPathComponent("ledger.sqlite").path
        let port = try FreePort.next()

        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve"]
        var environment = ProcessInfo.processInfo.environment
        environment["STOREGATE_PORT"] = String(port)
        environment["STOREGATE_DATABASE"] = "sqlite:\(database)"
        environment["STOREGATE_BUNDLE_IDS"] = Self.bundleId
        environment["STOREGATE_TRUST_DIR"] = trust.path
        environment["STOREGATE_ENVIRONMENTS"] = "test"
        environment["STOREGATE_API_KEYS"] = "disk:\(Self.key)"
        environment["STOREGATE_DATABASE_TIMEOUT_MS"] = "1000"
        environment["STOREGATE_LOG_LEVEL"] = "critical"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        var ready = false
        for _ in 0..<100 where !ready {
            ready = (try? await Self.send("GET", port, "/readyz"))?.status == 200  // not listening yet: try again
            if !ready { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(ready, "storegate serve did not become ready")
        for index in 0..<3 {
            #expect(try await Self.send("POST", port, "/v1/receipts/verify", body: try Self.receipt(index)).status == 200)
        }

        // The files may no longer grow: the next write fails at the file.
        try await Self.limitFileSize(of: process.processIdentifier, to: "4096")
        let refused = try await Self.send("POST", port, "/v1/receipts/verify", body: try Self.receipt(3))
        #expect(refused.status == 503)
        #expect(refused.json["code"] as? String == "ledger_unavailable")
        #expect(refused.json["retryable"] as? Bool == true)
        #expect(refused.elapsed < .seconds(3), "the refusal took \(refused.elapsed)")
        let notReady = try await Self.send("GET", port, "/readyz")
        #expect(notReady.status == 503)
        #expect(notReady.elapsed < .seconds(2))
        // Reads do not need the file to grow.
        #expect(try await Self.send("GET", port, "/v1/accounts/disk-0/entitlements").status == 200)

        // Room again: the same process heals, and the refused purchase records on retry.
        try await Self.limitFileSize(of: process.processIdentifier, to: "unlimited")
        #expect(try await Self.send("GET", port, "/readyz").status == 200)
        #expect(try await Self.send("POST", port, "/v1/receipts/verify", body: try Self.receipt(3)).status == 200)
        #expect(try await Self.send("POST", port, "/v1/receipts/verify", body: try Self.receipt(4)).status == 200)

        process.terminate()
        process.waitUntilExit()
        let ledger = try SQLiteLedger(path: database)
        let report = try await ledger.checkIntegrity()
        #expect(report.problems.isEmpty, "\(report.problems)")
        for index in 0...4 {
            let owned = try await ledger.entitlements(for: try AccountID("disk-\(index)"), at: Date())
            #expect(owned.isEntitled(to: "com.example.storegate.pro"), "disk-\(index) lost its purchase")
        }
        await ledger.close()
    }
}

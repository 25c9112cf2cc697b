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

    /// The service's database timeout here, and what a loaded CI machine (every suite at once on
    /// two cores) may add to a reply: the bounds below say "refused, not stuck waiting for the
    /// file", never how fast.
    static let timeout: Duration = .milliseconds(1000)
    static let slack: Duration = .seconds(5)

    @Test("a write that cannot reach the file answers 503 retryable at once, /readyz says so, and both heal when the file can grow again; the file stays intact",
          .enabled(if: DiskFullTests.prlimit != nil, "prlimit (util-linux) is not installed"))
    func fileSizeLimit() async throws {
        let serve = try await ServeProcess.start("disk", environment: ["STOREGATE_DATABASE_TIMEOUT_MS": String(Self.timeout.components.seconds * 1000)])
        defer { serve.stop() }
        let process = serve.process
        let database = serve.database
        for index in 0..<3 {
            #expect(try await serve.send("POST", "/v1/receipts/verify", body: try ServeProcess.receipt(index)).status == 200)
        }

        // The files may no longer grow: the next write fails at the file.
        try await Self.limitFileSize(of: process.processIdentifier, to: "4096")
        let refused = try await serve.send("POST", "/v1/receipts/verify", body: try ServeProcess.receipt(3))
        #expect(refused.status == 503)
        #expect(refused.json["code"] as? String == "ledger_unavailable")
        #expect(refused.json["retryable"] as? Bool == true)
        #expect(refused.elapsed < Self.timeout + Self.slack, "the refusal took \(refused.elapsed)")
        let notReady = try await serve.send("GET", "/readyz")
        #expect(notReady.status == 503)
        #expect(notReady.elapsed < Self.timeout + Self.slack, "/readyz took \(notReady.elapsed)")
        // Reads do not need the file to grow.
        #expect(try await serve.send("GET", "/v1/accounts/disk-0/entitlements").status == 200)

        // Room again: the same process heals, and the refused purchase records on retry.
        try await Self.limitFileSize(of: process.processIdentifier, to: "unlimited")
        #expect(try await serve.send("GET", "/readyz").status == 200)
        #expect(try await serve.send("POST", "/v1/receipts/verify", body: try ServeProcess.receipt(3)).status == 200)
        #expect(try await serve.send("POST", "/v1/receipts/verify", body: try ServeProcess.receipt(4)).status == 200)

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

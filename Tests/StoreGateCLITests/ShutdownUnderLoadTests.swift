import Foundation
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerSQLite
import StoreGateTestSupport
import Testing


/// SIGTERM while a load generator runs (issue 32 item 6): every request the service took is
/// answered, none is cut; what it answered 200 is in the ledger, what it did not answer is not;
/// the process exits 0 within its grace period.
@Suite("storegate serve: SIGTERM under load")
struct ShutdownUnderLoadTests {
    static let curl = ["/usr/bin/curl", "/bin/curl"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The load generator: `clients` shell loops, each posting its own receipts with curl (one
    /// connection per request, again from the first when it ran through them: a repeat is a
    /// duplicate, answered 200), writing `index status exit` per request to its own file, until
    /// the service stops answering after the `stop` file appeared.
    static func loadScript(clients: Int, perClient: Int, port: Int, directory: URL) -> String {
        """
        for c in $(seq 0 \(clients - 1)); do
          ( while true; do for i in $(seq $((c * \(perClient))) $((c * \(perClient) + \(perClient) - 1))); do
              code=$(\(curl ?? "curl") -s -o \(directory.path)/reply-$i.json -w '%{http_code}' -H 'Connection: close' \\
                -H 'Authorization: Bearer \(ServeProcess.key)' -H 'Content-Type: application/json' \\
                --data-binary @\(directory.path)/body-$i.json http://127.0.0.1:\(port)/v1/receipts/verify)
              rc=$?
              echo "$i $code $rc"
              [ -e \(directory.path)/stop ] && [ $rc -ne 0 ] && break 2
            done; done > \(directory.path)/client-$c.txt ) &
        done
        wait
        """
    }

    /// How many requests the load generator's clients got an answer to so far (curl exit 0).
    static func answered(clients: Int, in directory: URL) -> Int {
        (0..<clients).reduce(0) { sum, client in
            let text = (try? String(contentsOf: directory.appendingPathComponent("client-\(client).txt"), encoding: .utf8)) ?? ""  // not written yet: none
            return sum + text.split(separator: "\n").filter { line in
                let parts = line.split(separator: " ").compactMap { Int($0) }
                return parts.count == 3 && parts[2] == 0
            }.count
        }
    }

    @Test("SIGTERM with 12 curl clients sending purchases: every 200 is recorded and nothing unanswered is (no request the service read is cut), exit 0 at once",
          .enabled(if: ShutdownUnderLoadTests.curl != nil, "curl is not installed"))
    func sigtermUnderLoad() async throws {
        // Distinct purchases, minted off the cooperative threads (minting 240 RSA receipts takes
        // seconds in a debug build, and every other test shares those threads).
        let authority = try TestCertificateAuthority.shared(.rsa2048)
        let bodies: [Data] = try await runBlocking {
            let minter = ReceiptMinter(authority: authority)
            return try (0..<240).map { try JSONSerialization.data(withJSONObject: ServeProcess.receipt($0, base: 94_000_000_000_000, account: "load", minter: minter)) }
        }
        let serve = try await ServeProcess.start("shutdown", environment: ["STOREGATE_SHUTDOWN_GRACE_SECONDS": "20"]) { directory in
            for (index, body) in bodies.enumerated() {
                try body.write(to: directory.appendingPathComponent("body-\(index).json"))
            }
            return [:]
        }
        defer { serve.stop() }
        let process = serve.process
        let directory = serve.directory
        defer { try? FileManager.default.removeItem(at: directory) }
        let port = serve.port
        let database = serve.database

        // The load: 12 clients, each through its own 20 purchases (again and again) until the
        // service stops answering.
        let clients = 12
        let perClient = bodies.count / clients
        let generator = Process()
        generator.executableURL = URL(fileURLWithPath: "/bin/bash")
        generator.arguments = ["-c", Self.loadScript(clients: clients, perClient: perClient, port: port, directory: directory)]
        try generator.run()
        // Two seconds of load at least, and until more than 20 requests were answered: on a loaded
        // machine (every suite at once on two cores) the debug service may answer fewer in 2 s.
        try await Task.sleep(for: .seconds(2))
        _ = try await TracingCLITests.eventually { Self.answered(clients: clients, in: directory) > 20 }
        _ = FileManager.default.createFile(atPath: directory.appendingPathComponent("stop").path, contents: nil)
        let signalledAt = ContinuousClock.now
        process.terminate()
        let exited = try await runBlocking { () -> Bool in
            let deadline = Date().addingTimeInterval(25)
            while process.isRunning, Date() < deadline { usleep(10_000) }
            return !process.isRunning
        }
        let shutdown = ContinuousClock.now - signalledAt
        #expect(exited, "storegate serve did not exit within its grace period")
        #expect(process.terminationStatus == 0, "exit status \(process.terminationStatus)")
        #expect(shutdown < .seconds(10), "the shutdown took \(shutdown) (grace 20 s): something waited for a request that never finished")
        try await runBlocking { generator.waitUntilExit() }

        var ok: [Int] = []
        var refused: [Int] = []
        var unanswered: [(Int, Int)] = []
        var answered = 0
        for client in 0..<clients {
            let text = try String(contentsOf: directory.appendingPathComponent("client-\(client).txt"), encoding: .utf8)
            for line in text.split(separator: "\n") {
                let parts = line.split(separator: " ").compactMap { Int($0) }
                guard parts.count == 3 else { continue }
                let (index, status, exit) = (parts[0], parts[1], parts[2])
                switch (exit, status) {
                case (0, 200):
                    answered += 1
                    ok.append(index)
                case (0, 503):
                    answered += 1
                    let reply = try Data(contentsOf: directory.appendingPathComponent("reply-\(index).json"))
                    let code = (try JSONSerialization.jsonObject(with: reply) as? [String: Any])?["code"] as? String
                    #expect(code == "shutting_down", "request \(index): 503 \(code ?? "-")")
                case (0, let other):
                    answered += 1
                    Issue.record("request \(index) answered \(other)")
                case (7, _):
                    refused.append(index)  // not connected: the service no longer listened
                default:
                    unanswered.append((index, exit))  // connected, no reply (reset or closed)
                }
            }
        }
        #expect(answered > 20, "the load generator barely ran: \(answered) answers")
        #expect(!refused.isEmpty || !unanswered.isEmpty, "the load did not reach the shutdown")

        let ledger = try SQLiteLedger(path: database)
        for index in ok {
            let owned = try await ledger.entitlements(for: try AccountID("load-\(index)"), at: Date())
            #expect(owned.isEntitled(to: "com.example.storegate.pro"), "load-\(index) was answered 200 but not recorded")
        }
        for (index, _) in unanswered where !ok.contains(index) {
            let owned = try await ledger.entitlements(for: try AccountID("load-\(index)"), at: Date())
            #expect(!owned.isEntitled(to: "com.example.storegate.pro"), "load-\(index) was recorded but its request cut")
        }
        #expect(try await ledger.checkIntegrity().problems.isEmpty)
        await ledger.close()
        print("shutdown under load: \(answered) answered, \(refused.count) refused, \(unanswered.count) connected but never read (curl exits \(Set(unanswered.map(\.1)).sorted())), exit after \(shutdown)")
    }
}

import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `storegate serve` as a child process, for the tests of the running service: a SQLite ledger
/// in a temporary directory, the test CA's root as the only trust anchor, the `Test`
/// environment, one API key, a free port of 127.0.0.1.
struct ServeProcess {
    static let key = "serve-key-0123456789abcdef"
    static let bundleId = "com.example.storegate"

    /// A reply to ``send(_:_:body:)``.
    struct Reply {
        let status: Int
        let json: [String: Any]
        let elapsed: Duration
    }

    let process: Process
    let port: Int
    let directory: URL
    /// The file standard error goes to, when ``start(_:arguments:environment:logToFile:prepare:binary:)`` was asked to keep it.
    let stderr: URL?

    /// What the service wrote to standard error so far (empty when not kept).
    var log: String { stderr.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? "" }  // a test reading its own file

    /// The ledger's file.
    var database: String { directory.appendingPathComponent("ledger.sqlite").path }

    /// Starts `storegate serve` and waits (up to 20 s) until `/readyz` answers 200.
    ///
    /// - Parameters:
    ///   - name: The temporary directory's prefix.
    ///   - arguments: Arguments after `serve`.
    ///   - environment: Settings added to (or replacing) the defaults above. `OTEL_` variables
    ///     of the test's own environment are never passed on.
    ///   - logToFile: Keeps standard error in the directory (``log``) instead of discarding it.
    ///   - prepare: Writes files into the directory before the service starts; returns settings
    ///     that name them.
    ///   - binary: The `storegate` binary to run (the one built next to the tests by default).
    static func start(
        _ name: String,
        arguments: [String] = [],
        environment extra: [String: String] = [:],
        logToFile: Bool = false,
        prepare: (URL) throws -> [String: String] = { _ in [:] },
        binary: URL? = nil
    ) async throws -> ServeProcess {
        let binary = try #require(binary ?? CLI.binary, "the storegate binary is not built next to the tests")
        let directory = try TemporaryFiles.directory(name)
        let trust = directory.appendingPathComponent("trust")
        try FileManager.default.createDirectory(at: trust, withIntermediateDirectories: true)
        try Data(try TestCertificateAuthority.shared(.rsa2048).root.der).write(to: trust.appendingPathComponent("root.der"))
        let prepared = try prepare(directory)
        let port = try FreePort.next()

        let process = Process()
        process.executableURL = binary
        process.arguments = ["serve"] + arguments
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("OTEL_") }
        environment["STOREGATE_PORT"] = String(port)
        environment["STOREGATE_DATABASE"] = "sqlite:\(directory.appendingPathComponent("ledger.sqlite").path)"
        environment["STOREGATE_BUNDLE_IDS"] = bundleId
        environment["STOREGATE_TRUST_DIR"] = trust.path
        environment["STOREGATE_ENVIRONMENTS"] = "test"
        environment["STOREGATE_API_KEYS"] = "serve:\(key)"
        environment["STOREGATE_LOG_LEVEL"] = "critical"
        environment.merge(extra) { _, new in new }
        environment.merge(prepared) { _, new in new }
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        var stderr: URL?
        if logToFile {
            let file = directory.appendingPathComponent("stderr.log")
            try Data().write(to: file)
            process.standardError = try FileHandle(forWritingTo: file)
            stderr = file
        } else {
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        let serve = ServeProcess(process: process, port: port, directory: directory, stderr: stderr)

        var ready = false
        // Generous: in the suite's first minute every suite starts at once on two cores, and a
        // debug binary's start-up then took over 20 s (a start-up that is stuck still fails here).
        let deadline = ContinuousClock.now + .seconds(60)
        while !ready, process.isRunning, ContinuousClock.now < deadline {
            ready = (try? await serve.send("GET", "/readyz"))?.status == 200  // not listening yet: try again
            if !ready { try await Task.sleep(for: .milliseconds(100)) }
        }
        if !ready { serve.stop() }
        try #require(ready, "storegate serve did not become ready: \(serve.log)")
        return serve
    }

    /// Sends a request with the API key; `body` as JSON.
    func send(_ method: String, _ path: String, body: [String: Any]? = nil) async throws -> Reply {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.httpMethod = method
        request.timeoutInterval = 20
        request.setValue("Bearer \(Self.key)", forHTTPHeaderField: "Authorization")
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

    /// SIGTERM, if it still runs.
    func stop() {
        if process.isRunning { process.terminate() }
    }

    /// A request body verifying a receipt of the `pro` non-consumable, transaction
    /// `base + index`, for account `"\(prefix)-\(index)"`.
    static func receipt(_ index: Int, base: Int = 93_000_000_000_000, account prefix: String = "disk") throws -> [String: Any] {
        try receipt(index, base: base, account: prefix, minter: ReceiptMinter(authority: try TestCertificateAuthority.shared(.rsa2048)))
    }

    /// ``receipt(_:base:account:)`` with a given minter (to mint many off the cooperative threads).
    static func receipt(_ index: Int, base: Int, account prefix: String, minter: ReceiptMinter) throws -> [String: Any] {
        var payload = ReceiptMinter.Payload()
        payload.bundleId = bundleId
        payload.creationDate = Date(timeIntervalSince1970: 1_700_000_000)
        payload.purchases = [.init(productId: "com.example.storegate.pro", transactionId: String(base + index), purchaseDate: Date(timeIntervalSince1970: 1_699_999_000))]
        return ["receipt": Base64.encode(try minter.mint(payload)), "account": "\(prefix)-\(index)"]
    }
}

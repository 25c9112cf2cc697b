import AsyncHTTPClient
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOHTTP1
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerSQLite
import StoreGateServer
import StoreGateTestSupport

/// `storegate-dev bench console`: the console's pages on a SQLite ledger where one account has
/// 10,000 timeline events among 20,000 other accounts' records, through the running service
/// on loopback. Each line: the page's own server time (its `Server-Timing`) and the whole
/// round trip, p50 and p99; then the console's asset sizes.
enum ConsoleBenchmark {
    static let key = "bench-console-key-0123456789abcdef"

    static func run(iterations: Int) async throws {
        let samples = max(20, min(iterations, 300))
        print("console (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(samples) requests per line)")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-bench-console-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder

        // The data: 20,000 records over 5,000 accounts, then one account with 10,000 events.
        let authority = try TestCertificateAuthority(keyKind: .rsa2048, shape: .init(label: "StoreGate Bench"))
        var configuration = ServerConfiguration()
        configuration.port = 0
        configuration.apps = [.init(bundleId: LedgerStressCommand.bundleId)]
        configuration.environments = [.production, .sandbox, .test]
        var trust = TrustStore()
        try trust.addOptInAnchor(der: authority.root.der)
        configuration.trustStore = trust
        var keys = APIKeyStore()
        try keys.add(name: "bench", secret: key, permissions: [.console])
        configuration.apiKeys = keys
        let ledger = try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path, configuration: try LedgerBenchmark.configuration())
        let setup = BenchSupport.now()
        for index in 0..<20_000 {
            let (proof, account) = try LedgerBenchmark.proof(index, accounts: 5_000)
            try await ledger.record(proof, for: account)
        }
        let heavy = try LedgerStressCommand.account("heavy")
        let credit = VerifiedProof(
            kind: .signedTransaction, environment: .production, bundleId: LedgerStressCommand.bundleId, signedDate: Date(),
            transactions: [LedgerStressCommand.transaction("heavy-coins", original: "heavy-coins", product: "coins.heavy", type: .consumable, date: Date(), quantity: 10_000)],
            rawProof: Array("heavy".utf8)
        )
        try await ledger.record(credit, for: heavy)
        for index in 1..<10_000 {
            try await ledger.consume("coins.heavy", quantity: 1, idempotencyKey: "k\(index)", for: heavy, at: Date())
        }
        print("  set-up: 30,000 records and consumptions in \(String(format: "%.1f", Double(BenchSupport.now() - setup) / 1e9)) s")

        var payload = ReceiptMinter.Payload()
        payload.bundleId = LedgerStressCommand.bundleId
        payload.purchases = [.init(productId: "coins.0", transactionId: "9000000000000001", purchaseDate: Date(), quantity: 1)]
        let receipt = Base64.encode(try ReceiptMinter(authority: authority).mint(payload))

        var logger = Logger(label: "storegate.bench.console")
        logger.logLevel = .error
        let port = PortBox()
        let app = buildApplication(configuration: configuration, ledger: ledger, logger: logger) { channel in
            port.set(channel.localAddress?.port ?? 0)
        }
        let server = Task { try await app.runService() }
        defer { server.cancel() }
        while port.value == 0 { try await Task.sleep(for: .milliseconds(5)) }
        let base = "http://127.0.0.1:\(port.value)"
        var clientConfiguration = HTTPClient.Configuration()
        clientConfiguration.redirectConfiguration = .disallow  // the sign-in's 303 carries the session cookie
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: clientConfiguration)

        let session = try await signIn(client, base: base)
        let newest = try await ledger.timeline(for: heavy, before: nil, limit: 1).first?.sequence ?? 1
        print("page                                              server p50 ms  server p99 ms   round trip p50 ms  p99 ms")
        for (label, path) in [
            ("account, 10,000 events: newest page", "/console/accounts/heavy"),
            ("account, 10,000 events: a middle page", "/console/accounts/heavy?before=\(newest - 5_000)"),
            ("account, 10,000 events: the oldest page", "/console/accounts/heavy?before=\(newest - 9_899)"),
            ("account with a few records", "/console/accounts/acct-42"),
            ("search by account id", "/console/search?q=heavy"),
            ("search by transaction id", "/console/search?q=bench-12345"),
            ("overview, 90 days", "/console"),
            ("system", "/console/system"),
        ] {
            try await measure(client, label: label, url: base + path, cookie: session.cookie, samples: samples)
        }
        let form = "csrf=\(session.csrf)&proof=\(receipt.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        try await measure(client, label: "inspector: a receipt, every step", url: base + "/console/inspect", cookie: session.cookie, samples: samples, form: form)

        var total = 0
        for asset in ["/console/assets/console.css", "/console/assets/console.js"] {
            let response = try await client.execute(HTTPClientRequest(url: base + asset), timeout: .seconds(10))
            total += try await response.body.collect(upTo: 1 << 20).readableBytes
        }
        print("  console assets (stylesheet and script, uncompressed): \(total) bytes")
        try await client.shutdown()
        server.cancel()
        _ = try? await server.value
    }

    final class PortBox: @unchecked Sendable {
        private let lock = NSLock()
        private var port = 0
        var value: Int { lock.withLock { port } }
        func set(_ value: Int) { lock.withLock { port = value } }
    }

    struct Session {
        let cookie: String
        let csrf: String
    }

    static func signIn(_ client: HTTPClient, base: String) async throws -> Session {
        let page = try await client.execute(HTTPClientRequest(url: base + "/console/signin"), timeout: .seconds(10))
        let html = String(buffer: try await page.body.collect(upTo: 1 << 20))
        let signInCookie = page.headers["set-cookie"].first.map { String($0.prefix { $0 != ";" }) } ?? ""
        let token = csrf(html)
        var request = HTTPClientRequest(url: base + "/console/signin")
        request.method = .POST
        request.headers.add(name: "cookie", value: signInCookie)
        request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
        request.body = .bytes(ByteBuffer(string: "csrf=\(token)&key=\(key)"))
        let response = try await client.execute(request, timeout: .seconds(10))
        guard let cookie = response.headers["set-cookie"].first(where: { $0.hasPrefix("storegate_console=") }).map({ String($0.prefix { $0 != ";" }) }) else {
            throw CLIError("bench console: the sign-in did not set a session (status \(response.status.code))")
        }
        var overview = HTTPClientRequest(url: base + "/console")
        overview.headers.add(name: "cookie", value: cookie)
        let signedIn = try await client.execute(overview, timeout: .seconds(30))
        return Session(cookie: cookie, csrf: csrf(String(buffer: try await signedIn.body.collect(upTo: 4 << 20))))
    }

    static func csrf(_ html: String) -> String {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return "" }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    static func measure(_ client: HTTPClient, label: String, url: String, cookie: String, samples: Int, form: String? = nil) async throws {
        var server: [Double] = []
        var roundTrip: [Double] = []
        for _ in 0..<samples {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "cookie", value: cookie)
            if let form {
                request.method = .POST
                request.headers.add(name: "content-type", value: "application/x-www-form-urlencoded")
                request.body = .bytes(ByteBuffer(string: form))
            }
            let start = BenchSupport.now()
            let response = try await client.execute(request, timeout: .seconds(30))
            _ = try await response.body.collect(upTo: 16 << 20)
            roundTrip.append(Double(BenchSupport.now() - start) / 1e6)
            guard response.status == .ok, let timing = response.headers["server-timing"].first,
                  let duration = timing.split(separator: "=").last.flatMap({ Double($0) })
            else {
                throw CLIError("bench console: \(url) answered \(response.status.code) without Server-Timing")
            }
            server.append(duration)
        }
        server.sort()
        roundTrip.sort()
        func f(_ value: Double) -> String { String(format: "%.2f", value) }
        print("\(label.padding(toLength: 50, withPad: " ", startingAt: 0))\(f(BenchSupport.median(server)).leftPadded(13))\(f(BenchSupport.percentile(server, 0.99)).leftPadded(15))\(f(BenchSupport.median(roundTrip)).leftPadded(20))\(f(BenchSupport.percentile(roundTrip, 0.99)).leftPadded(8))")
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String {
        count >= width ? self : String(repeating: " ", count: width - count) + self
    }
}

import Foundation
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateLedger
import StoreGateLedgerSQLite
import StoreGateSignedData
import StoreGateSync
import StoreGateTestSupport

/// `storegate-dev bench sync`: notifications applied per second from Get Notification History
/// pages (through the local Apple stand-in, over HTTP, every `signedPayload` verified — the
/// notification and its nested transaction — and applied to a SQLite ledger), and the heap
/// across the run, sampled after every 50 pages.
///
/// The story: `count / 10` subscribers whose purchases are recorded first, then `count`
/// DID_RENEW notifications about their families (each a new renewal transaction, ten per
/// family), none of which the webhook received. Pages hold 20 notifications, as Apple's do.
enum SyncBenchmark {
    static func run(count: Int) async throws {
        print("sync (\(BenchSupport.isOptimized ? "release" : "DEBUG build: figures are not representative"), \(ProcessInfo.processInfo.activeProcessorCount) cores)")
        let logger = Logger(label: "storegate.bench", factory: { _ in SwiftLogNoOpLogHandler() })
        let bundleId = "com.example.storegate"
        let minter = try JWSMinter.shared()
        let verifier = SignedDataVerifier(
            expectations: SignedDataExpectations(bundleId: bundleId, environments: [.sandbox, .test]),
            chainVerifier: CertificateChainVerifier(trustStore: try minter.authority.trustStore())
        )
        // Ten renewals per family at most, as a subscriber of ten months has.
        let families = max(100, count / 10)
        let now = Date()
        let base = JWSPayloads.milliseconds(now) - 28 * 86_400_000  // the sandbox keeps 30 days
        @Sendable func transaction(_ id: Int, family: Int, signed: Int64) throws -> String {
            var payload = JWSPayloads.transaction(
                bundleId: bundleId, signedDate: Date(timeIntervalSince1970: Double(signed) / 1000),
                transactionId: String(4_000_000_000_000_000 + id), originalTransactionId: String(4_000_000_000_000_000 + family)
            )
            payload["purchaseDate"] = signed - 60_000
            payload["expiresDate"] = signed + 30 * 86_400_000
            payload["webOrderLineItemId"] = String(5_000_000_000_000_000 + id)
            return try minter.mint(json: payload)
        }
        let mintStart = BenchSupport.now()
        var purchases: [String] = []
        for family in 0..<families { purchases.append(try transaction(family, family: family, signed: base)) }
        let step = max(1, (26 * 86_400_000) / Int64(count))
        // Minted on every core, in chunks put back in order.
        let chunks = max(1, ProcessInfo.processInfo.activeProcessorCount)
        let notifications = try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
            for chunk in 0..<chunks {
                group.addTask {
                    var minted: [String] = []
                    for index in stride(from: chunk * count / chunks, to: (chunk + 1) * count / chunks, by: 1) {
                        let signed = base + 60_000 + Int64(index) * step
                        let info = try transaction(families + index, family: index % families, signed: signed)
                        minted.append(try minter.mint(json: JWSPayloads.notification(
                            type: "DID_RENEW", bundleId: bundleId, signedDate: Date(timeIntervalSince1970: Double(signed) / 1000),
                            signedTransactionInfo: info, notificationUUID: UUID().uuidString.lowercased()
                        )))
                    }
                    return (chunk, minted)
                }
            }
            var parts: [Int: [String]] = [:]
            for try await (chunk, minted) in group { parts[chunk] = minted }
            return (0..<chunks).flatMap { parts[$0] ?? [] }
        }
        print("          (minted \(count) notifications in \(String(format: "%.1f", Double(BenchSupport.now() - mintStart) / 1e9)) s)")

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-bench-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
        let ledger = try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path)
        for (family, signed) in purchases.enumerated() {
            let verified = try await verifier.verifyTransaction(bytes: Array(signed.utf8))
            try await ledger.record(verified.proof, for: try AccountID("bench-\(family)"))
        }

        let history = notifications
        let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: bundleId)
        let transport = AsyncHTTPClientTransport(logger: logger)
        let report = try await AppleStandIn.run { standIn in
            standIn.setServerAPIAccount(account)
            standIn.updateServerAPIData(.sandbox, bundleId: bundleId) {
                $0.notifications = history
                $0.notificationPageSize = 20
            }
            let client = try AppStoreServerAPIClient(
                tokens: AppStoreServerAPITokenProvider(credentials: credentials), environment: .sandbox,
                endpoints: standIn.serverAPIEndpoints, transport: transport,
                verifier: SignedDataPayloadVerifier(verifier, claimedEnvironment: .sandbox), logger: logger
            )
            let sync = NotificationHistorySync(
                client: client, ledger: ledger, settings: NotificationSyncSettings(maxPagesPerRun: 50), holder: "bench", logger: logger
            )
            // The stand-in's share: 50 pages fetched raw (no verification, no ledger).
            let tokens = AppStoreServerAPITokenProvider(credentials: credentials)
            let body = Array("{\"startDate\":\(JWSPayloads.milliseconds(now) - 29 * 86_400_000),\"endDate\":\(JWSPayloads.milliseconds(now))}".utf8)
            let fetchStart = BenchSupport.now()
            for page in 0..<50 {
                let token = try await tokens.token()
                let url = standIn.serverAPIEndpoints.sandbox + "/inApps/v1/notifications/history" + (page == 0 ? "" : "?paginationToken=p\(page * 20)")
                let response = try await transport.send(
                    TransportRequest(method: "POST", url: url, headers: [.init("Authorization", "Bearer " + token.compact), .init("Content-Type", "application/json")], body: body),
                    deadline: .now + .seconds(30)
                )
                guard response.status == 200 else { throw CLIError("the stand-in answered \(response.status)") }
            }
            LedgerBenchmark.report("-", "fetch 50 pages raw (stand-in; indexes first)", 1000, Double(BenchSupport.now() - fetchStart) / 1e9, [])
            // Runs of 50 pages, so the heap can be sampled between them.
            var samples: [Int] = []
            var total = (outcome: NotificationHistorySync.Report.Outcome.partial, pages: 0, recovered: 0, error: String?.none)
            let start = BenchSupport.now()
            while total.outcome == .partial {
                let report = await sync.run()
                total.outcome = report.outcome
                total.pages += report.pages
                total.recovered += report.recovered
                total.error = report.error.map { "\($0)" }
                samples.append(BenchSupport.anonymousMemory() ?? 0)
            }
            let seconds = Double(BenchSupport.now() - start) / 1e9
            return (total, seconds, samples)
        }
        try await transport.shutdown()
        await ledger.close()
        let (total, seconds, samples) = report
        guard total.outcome == .completed, total.recovered == count else {
            throw CLIError("the sync did not apply every notification: \(total.outcome.rawValue), \(total.recovered) of \(count), \(total.error ?? "")")
        }
        print("backend   operation                                      ops/s")
        LedgerBenchmark.report("sqlite", "apply \(count) notifications from history", count, seconds, [])
        let tenth = max(1, samples.count / 10)
        let early = samples.prefix(tenth).max() ?? 0
        let late = samples.suffix(tenth).max() ?? 0
        try await parts(Array(notifications.prefix(10_000)), purchases: purchases, verifier: verifier)
        print("          (\(total.pages) pages of 20; heap after the first tenth \(String(format: "%.1f", Double(early) / 1_048_576)) MB, after the last tenth \(String(format: "%.1f", Double(late) / 1_048_576)) MB, peak \(String(format: "%.1f", Double(samples.max() ?? 0) / 1_048_576)) MB)")
    }

    /// Where the time goes: verifying the notifications alone, and applying verified ones to a
    /// fresh SQLite ledger alone (no HTTP).
    static func parts(_ notifications: [String], purchases: [String], verifier: SignedDataVerifier) async throws {
        var start = BenchSupport.now()
        var verified: [VerifiedNotification] = []
        for signed in notifications {
            verified.append(try await verifier.verifyNotification(bytes: Array(signed.utf8)).notification)
        }
        LedgerBenchmark.report("-", "verify \(notifications.count) notifications (2 JWS each)", notifications.count, Double(BenchSupport.now() - start) / 1e9, [])
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storegate-bench-sync-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
        let ledger = try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path)
        for (family, signed) in purchases.enumerated() {
            try await ledger.record(try await verifier.verifyTransaction(bytes: Array(signed.utf8)).proof, for: try AccountID("bench-\(family)"))
        }
        start = BenchSupport.now()
        for notification in verified {
            try await ledger.apply(notification)
        }
        LedgerBenchmark.report("sqlite", "apply \(verified.count) verified notifications", verified.count, Double(BenchSupport.now() - start) / 1e9, [])
        await ledger.close()
    }
}

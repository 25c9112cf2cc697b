import Foundation
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateLedgerSQLite
import StoreGateSignedData
@testable import StoreGateSync
import StoreGateTestSupport
import Testing

/// The ledger converges to Apple's history: notifications the webhook missed are recovered
/// from Get Notification History (through the local Apple stand-in), applied once, and a
/// forged page changes nothing.
@Suite("App Store sync: notification history")
struct NotificationSyncTests {
    static let logger = Logger(label: "storegate.sync-tests", factory: { _ in SwiftLogNoOpLogHandler() })
    static let retries = RetryPolicy(
        maxAttempts: 4, initialBackoff: .milliseconds(5), maxBackoff: .milliseconds(20), jitter: 0.5,
        attemptTimeout: .seconds(60), totalDeadline: .seconds(120), maxRetryAfter: .seconds(5)
    )

    /// The webhook's verifier for the test CA (which reports the `Test` environment).
    static func verifier(_ minter: JWSMinter) throws -> SignedDataVerifier {
        SignedDataVerifier(
            expectations: SignedDataExpectations(bundleId: SyncStory.bundleId, environments: [.production, .sandbox, .test]),
            chainVerifier: CertificateChainVerifier(trustStore: try minter.authority.trustStore())
        )
    }

    /// Runs `body` with a stand-in that accepts a fresh key, a transport, and a factory of syncs
    /// against it (sandbox; each with its own holder).
    static func withStandIn<T: Sendable>(
        _ body: @Sendable (AppleStandIn, JWSMinter, @escaping @Sendable (any Ledger, String, NotificationSyncSettings) throws -> NotificationHistorySync) async throws -> T
    ) async throws -> T {
        let minter = try JWSMinter.shared()
        let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: SyncStory.bundleId)
        let verifier = try verifier(minter)
        return try await AppleStandIn.run { standIn in
            standIn.setServerAPIAccount(account)
            let transport = AsyncHTTPClientTransport(logger: logger)
            do {
                let tokens = AppStoreServerAPITokenProvider(credentials: credentials)
                let result = try await body(standIn, minter) { ledger, holder, settings in
                    let client = try AppStoreServerAPIClient(
                        tokens: tokens, environment: .sandbox, endpoints: standIn.serverAPIEndpoints, transport: transport,
                        verifier: SignedDataPayloadVerifier(verifier, claimedEnvironment: .sandbox), retryPolicy: retries, logger: logger
                    )
                    return NotificationHistorySync(client: client, ledger: ledger, settings: settings, holder: holder, logger: logger)
                }
                try await transport.shutdown()
                return result
            } catch {
                try? await transport.shutdown()
                throw error
            }
        }
    }

    /// Records the story's first purchases, then hands the webhook a random 60 % of its
    /// notifications, shuffled, some twice; returns the UUIDs it delivered.
    static func prepare(
        _ ledger: any Ledger, story: SyncStory, minter: JWSMinter, seed: UInt64, consumption: ConsumptionResponder? = nil
    ) async throws -> Set<String> {
        let verifier = try verifier(minter)
        for purchase in story.purchases {
            let verified = try await verifier.verifyTransaction(bytes: Array(purchase.signedTransaction.utf8))
            try await ledger.record(verified.proof, for: try AccountID(purchase.account))
        }
        var random = SeededRandom(seed: seed ^ 0x5EED)
        var delivered = story.notifications.filter { _ in random.next() % 100 < 60 }
        delivered += delivered.filter { _ in random.next() % 5 == 0 }  // Apple retried some
        delivered.shuffle(using: &random)
        for notification in delivered {
            let verified = try await verifier.verifyNotification(bytes: Array(notification.signedPayload.utf8))
            try await ledger.apply(verified.notification)
            try await consumption?.enqueue(verified.notification)  // as the webhook does
        }
        return Set(delivered.map(\.uuid))
    }

    /// A responder answering every request of a story (its requests span 25 days: the window is
    /// widened to take them all).
    static func storyResponder(_ sync: NotificationHistorySync, _ ledger: any Ledger, holder: String) -> ConsumptionResponder {
        ConsumptionResponder(
            clients: [sync.client], ledger: ledger, settings: ConsumptionTests.settings(window: .seconds(30 * 86_400)), holder: holder, logger: logger
        )
    }

    /// Every consumption request of the story was answered exactly once, each as a delivered
    /// subscription (Apple takes no percentage for those).
    static func expectAnswered(_ standIn: AppleStandIn, _ story: SyncStory, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let calls = standIn.consumptionRequests
        #expect(calls.map(\.transactionId).sorted() == story.consumptionRequests.sorted(), sourceLocation: sourceLocation)
        for call in calls {
            let body = try #require(try JSONSerialization.jsonObject(with: Data(call.body)) as? [String: Any], sourceLocation: sourceLocation)
            #expect(body["deliveryStatus"] as? String == "DELIVERED", sourceLocation: sourceLocation)
            #expect(body["consumptionPercentage"] == nil, sourceLocation: sourceLocation)
        }
    }

    /// Every account owns exactly what the story says.
    static func expectTruth(_ ledger: any Ledger, _ story: SyncStory, now: Date, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        var mismatches: [String] = []
        for (account, expected) in story.truth.sorted(by: { $0.key < $1.key }) {
            let entitlements = try await ledger.entitlements(for: try AccountID(account), at: now)
            let owned = Set(entitlements.nonConsumables.filter(\.isEntitled).map(\.productId))
                .union(entitlements.subscriptions.filter(\.isEntitled).map(\.productId))
            if owned != expected { mismatches.append("\(account): owns \(owned.sorted()), the story says \(expected.sorted())") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.joined(separator: "; "))", sourceLocation: sourceLocation)
    }

    static func sqlite() throws -> (SQLiteLedger, URL) {
        let directory = try TemporaryFiles.directory("sync")
        return (try SQLiteLedger(path: directory.appendingPathComponent("ledger.sqlite").path), directory)
    }

    @Test("200 events across 30 accounts, 60 % delivered by the webhook: one sync makes every account right (SQLite)")
    func scenarioSQLite() async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        let now = Date()
        try await Self.withStandIn { standIn, minter, makeSync in
            let story = try SyncStory(minter: minter, accounts: 30, notifications: 200, seed: seed, now: now)
            #expect(story.notifications.count == 200, "seed \(seed)")
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) {
                $0.notifications = story.notifications.map(\.signedPayload)
                $0.notificationPageSize = 20
            }
            let (ledger, directory) = try Self.sqlite()
            defer { try? FileManager.default.removeItem(at: directory) }
            let base = try makeSync(ledger, "instance-1", NotificationSyncSettings())
            let responder = Self.storyResponder(base, ledger, holder: "instance-1")
            let delivered = try await Self.prepare(ledger, story: story, minter: minter, seed: seed, consumption: responder)
            let sync = NotificationHistorySync(client: base.client, ledger: ledger, holder: "instance-1", consumption: responder, logger: Self.logger)
            let report = await sync.run()
            #expect(report.outcome == .completed, "seed \(seed): \(report.error.map { "\($0)" } ?? "")")
            #expect(report.pages == 10)
            #expect(report.recovered == 200 - delivered.count, "seed \(seed)")
            #expect(report.duplicates == delivered.count, "seed \(seed)")
            #expect(report.rejected == 0)
            try await Self.expectTruth(ledger, story, now: now)
            // Every consumption request, whichever route brought it, answered once.
            #expect(await responder.processOnce().sent == story.consumptionRequests.count)
            try Self.expectAnswered(standIn, story)
            // The status any instance reads; a second run reads only the look-back and changes nothing.
            let status = try #require(try await AppStoreSyncService.statuses(of: ledger, at: Date()).first)
            #expect(status.environment == .sandbox)
            #expect(status.recovered == Int64(200 - delivered.count))
            #expect(status.lastError == nil)
            #expect(status.windowInProgress == nil)
            #expect(status.leaseHolder == nil)  // released at the end of the run
            let syncedUntil = try #require(status.syncedUntil)
            let again = await sync.run()
            #expect(again.outcome == .completed)
            #expect(again.recovered == 0)
            let history = standIn.serverAPICalls.filter { $0.route == "inApps/v1/notifications/history" }
            let last = try #require(try JSONSerialization.jsonObject(with: Data(history[history.count - 1].body)) as? [String: Any])
            #expect((last["startDate"] as? NSNumber)?.int64Value == JWSPayloads.milliseconds(syncedUntil) - 3_600_000)
            await ledger.close()
        }
    }

    @Test("two instances on PostgreSQL sync at once: one holds the lease, every notification is applied once, every account right",
          .enabled(if: TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired))
    func scenarioPostgres() async throws {
        let seed = UInt64.random(in: 1...UInt64.max)
        let now = Date()
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        do {
            let url = try await server.makeDatabase()
            let first = try await PostgresLedger.connect(url: url, maximumConnections: 4)
            let second = try await PostgresLedger.connect(url: url, maximumConnections: 4)
            try await Self.withStandIn { standIn, minter, makeSync in
                let story = try SyncStory(minter: minter, accounts: 30, notifications: 200, seed: seed, now: now)
                standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) {
                    $0.notifications = story.notifications.map(\.signedPayload)
                    $0.notificationPageSize = 20
                }
                let client = try makeSync(first, "instance-1", NotificationSyncSettings())
                let answers = [Self.storyResponder(client, first, holder: "instance-1"), Self.storyResponder(client, second, holder: "instance-2")]
                let delivered = try await Self.prepare(first, story: story, minter: minter, seed: seed, consumption: answers[0])
                let one = NotificationHistorySync(client: client.client, ledger: first, holder: "instance-1", consumption: answers[0], logger: Self.logger)
                let two = NotificationHistorySync(client: client.client, ledger: second, holder: "instance-2", consumption: answers[1], logger: Self.logger)
                async let a = one.run()
                async let b = two.run()
                let reports = await [a, b]
                #expect(reports.allSatisfy { $0.outcome == .completed || $0.outcome == .leaseHeldElsewhere }, "seed \(seed): \(reports)")
                #expect(reports.contains { $0.outcome == .completed })
                // Each notification the webhook missed is new to the ledger exactly once.
                #expect(reports.map(\.recovered).reduce(0, +) == 200 - delivered.count, "seed \(seed): \(reports)")
                try await Self.expectTruth(first, story, now: now)
                try await Self.expectTruth(second, story, now: now)
                // Both instances answer at once: each request is sent by one of them, once.
                async let x = answers[0].processOnce()
                async let y = answers[1].processOnce()
                let passes = await [x, y]
                #expect(passes.map(\.sent).reduce(0, +) == story.consumptionRequests.count, "seed \(seed): \(passes)")
                try Self.expectAnswered(standIn, story)
            }
            await first.close()
            await second.close()
            server.stop()
        } catch {
            server.stop()
            throw error
        }
    }

    @Test("Apple's 429 with Retry-After, a 503 and an expired pagination token: the run still reads every page")
    func faults() async throws {
        let now = Date()
        try await Self.withStandIn { standIn, minter, makeSync in
            let story = try SyncStory(minter: minter, accounts: 5, notifications: 30, seed: 42, now: now)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) {
                $0.notifications = story.notifications.map(\.signedPayload)
                $0.notificationPageSize = 5
            }
            let ledger = InMemoryLedger()
            _ = try await Self.prepare(ledger, story: story, minter: minter, seed: 42)
            standIn.failNext(1, of: .serverAPI, with: .rateLimited(retryAfter: "1"))
            standIn.failNext(1, of: .serverAPI, with: .httpStatus(503))
            standIn.expirePaginationTokens(1)
            let report = await (try makeSync(ledger, "instance-1", NotificationSyncSettings())).run()
            #expect(report.outcome == .completed, "\(report.error.map { "\($0)" } ?? "")")
            try await Self.expectTruth(ledger, story, now: now)
            let tokens = standIn.serverAPICalls.filter { $0.route == "inApps/v1/notifications/history" }.map { $0.query["paginationToken"]?.first }
            // 429, 503, page 1, the expired token, page 1 again, then the rest.
            #expect(tokens.prefix(5) == [nil, nil, nil, "p5", nil], "\(tokens)")
            #expect(tokens.last == "p25")
        }
    }

    @Test("Apple's Retry-After beyond what the client waits holds the next run back; a run stopped at its page limit goes on at once")
    func schedule() async throws {
        try await Self.withStandIn { standIn, minter, makeSync in
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { _ in }
            let sync = try makeSync(InMemoryLedger(), "instance-1", NotificationSyncSettings())
            let service = AppStoreSyncService(syncs: [sync], interval: .seconds(900), logger: Self.logger)
            standIn.failNext(1, of: .serverAPI, with: .rateLimited(retryAfter: "3600"))
            let limited = await sync.run()
            #expect(limited.outcome == .failed)
            let retryAfter = try #require(limited.retryAfter)
            #expect(abs(retryAfter.timeIntervalSinceNow - 3600) < 60)
            let pause = service.pause(after: limited, now: Date()).components.seconds
            #expect((3500...3600).contains(pause), "\(pause)")
            // Otherwise the interval and up to 10 % more; a second after a partial run.
            let done = await sync.run()
            #expect(done.outcome == .completed)
            #expect((900...990).contains(service.pause(after: done, now: Date()).components.seconds))
            var partial = done
            partial.outcome = .partial
            #expect(service.pause(after: partial, now: Date()) == .seconds(1))
        }
    }

    @Test("a run stopped by its page limit resumes on the next page")
    func resumes() async throws {
        let now = Date()
        try await Self.withStandIn { standIn, minter, makeSync in
            let story = try SyncStory(minter: minter, accounts: 4, notifications: 20, seed: 7, now: now)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) {
                $0.notifications = story.notifications.map(\.signedPayload)
                $0.notificationPageSize = 5
            }
            let ledger = InMemoryLedger()
            _ = try await Self.prepare(ledger, story: story, minter: minter, seed: 7)
            let sync = try makeSync(ledger, "instance-1", NotificationSyncSettings(maxPagesPerRun: 2))
            #expect(await sync.run().outcome == .partial)
            let status = try #require(try await AppStoreSyncService.statuses(of: ledger, at: Date()).first)
            #expect(status.windowInProgress != nil)
            #expect(status.syncedUntil == nil)
            // Four pages: the second run reads the last two.
            #expect(await sync.run().outcome == .completed)
            let tokens = standIn.serverAPICalls.filter { $0.route == "inApps/v1/notifications/history" }.map { $0.query["paginationToken"]?.first }
            #expect(tokens == [nil, "p5", "p10", "p15"])
            try await Self.expectTruth(ledger, story, now: now)
        }
    }

    @Test("a forged history page (bad signature, another app, another environment) changes nothing and is reported",
          arguments: ["signature", "bundle", "environment"])
    func forgedPage(kind: String) async throws {
        let now = Date()
        try await Self.withStandIn { standIn, minter, makeSync in
            let story = try SyncStory(minter: minter, accounts: 3, notifications: 6, seed: 9, now: now)
            let signed = Date().addingTimeInterval(-3600)
            let forged: String
            switch kind {
            case "signature":
                // Another CA's chain, one StoreGate does not trust.
                let stranger = JWSMinter(authority: try TestCertificateAuthority(keyKind: .p256, shape: .init(label: "Stranger")))
                forged = try stranger.mint(json: JWSPayloads.notification(bundleId: SyncStory.bundleId, signedDate: signed, notificationUUID: UUID().uuidString))
            case "bundle":
                forged = try minter.mint(json: JWSPayloads.notification(bundleId: "com.example.other", signedDate: signed, notificationUUID: UUID().uuidString))
            default:
                forged = try minter.mint(json: JWSPayloads.notification(bundleId: SyncStory.bundleId, environment: "Production", signedDate: signed, notificationUUID: UUID().uuidString))
            }
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) {
                $0.notifications = story.notifications.map(\.signedPayload) + [forged]
                $0.notificationPageSize = 100
            }
            let ledger = InMemoryLedger()
            let verifier = try Self.verifier(minter)
            for purchase in story.purchases {
                try await ledger.record(try await verifier.verifyTransaction(bytes: Array(purchase.signedTransaction.utf8)).proof, for: try AccountID(purchase.account))
            }
            let before = try await ledger.events(after: 0, limit: 1000)
            let report = await (try makeSync(ledger, "instance-1", NotificationSyncSettings())).run()
            #expect(report.outcome == .failed)
            #expect(report.error?.code.rawValue == "signed_payload_rejected", "\(report.error.map { "\($0)" } ?? "")")
            #expect(report.recovered == 0)
            #expect(try await ledger.events(after: 0, limit: 1000) == before)
            let status = try #require(try await AppStoreSyncService.statuses(of: ledger, at: Date()).first)
            #expect(status.lastError?.code == "signed_payload_rejected")
            #expect(status.syncedUntil == nil)
        }
    }
}

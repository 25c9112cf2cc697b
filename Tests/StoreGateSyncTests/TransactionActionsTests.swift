import Foundation
import Metrics
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateSignedData
import StoreGateSync
import StoreGateTestSupport
import Testing

/// Finish Transaction and Set App Account Token, driven by the ledger's outbox (issue 33 item 3):
/// once per transaction under retries, restarts and two instances.
@Suite("Transaction actions at Apple")
struct TransactionActionsTests {
    static let namespace = UUID(uuidString: "6ba7b811-9dad-11d1-80b4-00c04fd430c8") ?? UUID()

    static func settings(finish: Bool = true, link: Bool = true) -> TransactionActions.Settings {
        TransactionActions.Settings(finishTransactions: finish, linkAccounts: link, accountTokenPolicy: .nameBased(namespace: namespace))
    }

    /// Runs `worker` until it is idle (at most 50 steps).
    static func drain(_ worker: TransactionActions) async throws {
        for _ in 0..<50 where try await worker.step() != .idle {}
    }

    @Test("each granted transaction is finished once and each purchase without a token linked once; restarts, a second instance and Apple's outage repeat nothing")
    func finishAndLinkOnce() async throws {
        let ledger = InMemoryLedger()
        try await Self.story(ledger, ledger)
    }

    @Test("the same on PostgreSQL, the two instances on two connection pools",
          .enabled(if: TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired, "PostgreSQL server binaries are not installed"))
    func finishAndLinkOncePostgres() async throws {
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false))
        defer { server.stop() }
        let url = try await server.makeDatabase()
        let first = try await PostgresLedger.connect(url: url, maximumConnections: 4)
        let second = try await PostgresLedger.connect(url: url, maximumConnections: 4)
        do {
            try await Self.story(first, second)
        } catch {
            await first.close()
            await second.close()
            throw error
        }
        await first.close()
        await second.close()
    }

    /// Instance one works on `ledger`, instance two on `other` (the same database).
    static func story(_ ledger: any Ledger, _ other: any Ledger) async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            let verifier = try NotificationSyncTests.verifier(minter)
            let client = try makeSync(ledger, "x", NotificationSyncSettings()).client
            func worker(_ holder: String, _ ledger: any Ledger) -> TransactionActions {
                TransactionActions(clients: [client], ledger: ledger, settings: Self.settings(), holder: holder, lease: .seconds(60),
                                   metrics: NOOPMetricsHandler.instance, logger: NotificationSyncTests.logger)
            }
            let one = worker("one", ledger)
            let two = worker("two", other)
            func record(_ id: String, original: String, start: Double, revoked: Double? = nil, account: String) async throws {
                let jws = try AccountRefreshTests.transaction(minter, id: id, original: original, start: start, revoked: revoked)
                try await ledger.record(try await verifier.verifyTransaction(bytes: Array(jws.utf8)).proof, for: try AccountID(account))
            }
            // History before the deployment is not acted on.
            try await record("7100000000000001", original: "7100000000000001", start: -40, account: "old")
            try await one.initializePlace()
            for id in ["7200000000000001", "7300000000000001", "7400000000000001"] {
                standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { $0.purchases[id] = AppleStandIn.PurchaseFixture(productId: "pro.monthly") }
            }
            try await record("7200000000000001", original: "7200000000000001", start: -10, account: "ann")
            try await record("7300000000000001", original: "7300000000000001", start: -10, revoked: -1, account: "bob")  // refunded: not granted
            try await Self.drain(one)
            try await Self.drain(two)

            #expect(standIn.finishedTransactions.map(\.transactionId) == ["7200000000000001"])
            let annToken = AppAccountTokenPolicy.nameBased(namespace: Self.namespace).token(for: try AccountID("ann"))?.uuidString.lowercased()
            #expect(standIn.purchase("7200000000000001", in: .sandbox)?.appAccountToken == annToken)
            #expect(standIn.purchase("7300000000000001", in: .sandbox)?.appAccountToken == nil)

            // Apple is down for the next purchase: nothing is skipped, nothing repeated once it is back.
            standIn.failAlways(.serverAPI, with: .httpStatus(503))
            try await record("7400000000000001", original: "7400000000000001", start: -5, account: "cy")
            guard case .waitUntil = try await one.step() else {
                Issue.record("expected to wait for Apple")
                return
            }
            standIn.stopFailing(.serverAPI)
            await one.stop()  // a restart: the other instance takes over where it stopped
            try await Self.drain(two)
            try await Self.drain(one)
            #expect(standIn.finishedTransactions.map(\.transactionId) == ["7200000000000001", "7400000000000001"])

            // A transaction Apple does not know is refused for good: counted, and the worker moves on.
            try await record("7500000000000001", original: "7500000000000001", start: -5, account: "dee")
            try await Self.drain(two)
            try await Self.drain(one)
            let progress = try #require(try await TransactionActions.progress(in: ledger))
            #expect(progress.finished == 2 && progress.linked == 2)
            // Both of dee's calls (link, then finish) are refused: Apple knows no such purchase.
            #expect(progress.failed == 2 && progress.lastErrorTransactionId == "7500000000000001")
            #expect(progress.lastError != nil)
            #expect(standIn.finishedTransactions.count == 2)
        }
    }

    @Test("off means no call; a purchase already carrying a token is not linked again")
    func settingsRespected() async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            let ledger = InMemoryLedger()
            let verifier = try NotificationSyncTests.verifier(minter)
            let client = try makeSync(ledger, "x", NotificationSyncSettings()).client
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { $0.purchases["7600000000000001"] = AppleStandIn.PurchaseFixture(productId: "pro.monthly") }
            let linkOnly = TransactionActions(clients: [client], ledger: ledger, settings: Self.settings(finish: false), holder: "one",
                                              metrics: NOOPMetricsHandler.instance, logger: NotificationSyncTests.logger)
            try await linkOnly.initializePlace()
            var payload = JWSPayloads.transaction(bundleId: SyncStory.bundleId, signedDate: Date(), transactionId: "7600000000000001",
                                                  originalTransactionId: "7600000000000001", productId: "pro.monthly")
            payload["appAccountToken"] = "11111111-2222-4333-8444-555555555555"
            let jws = try minter.mint(json: payload)
            try await ledger.record(try await verifier.verifyTransaction(bytes: Array(jws.utf8)).proof, for: try AccountID("11111111-2222-4333-8444-555555555555"))
            try await Self.drain(linkOnly)
            #expect(standIn.finishedTransactions.isEmpty)
            #expect(standIn.purchase("7600000000000001", in: .sandbox)?.appAccountToken == nil)
            #expect(standIn.serverAPICalls.filter { $0.route.contains("appAccountToken") || $0.route.contains("finish") }.isEmpty)
        }
    }
}

import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateLedger
import StoreGateSignedData
import StoreGateSync
import StoreGateTestSupport
import Testing

/// An account refreshed from Apple's transaction history and subscription statuses.
@Suite("App Store sync: account refresh")
struct AccountRefreshTests {
    static let day = 86_400_000.0

    /// A subscription transaction of `original`, purchased `start` days from now, 30 days long.
    static func transaction(_ minter: JWSMinter, id: String, original: String, start: Double, revoked: Double? = nil) throws -> String {
        let purchased = Date().addingTimeInterval(start * 86_400)
        var payload = JWSPayloads.transaction(
            bundleId: SyncStory.bundleId, signedDate: Date().addingTimeInterval(-60), transactionId: id, originalTransactionId: original,
            productId: "pro.monthly"
        )
        payload["purchaseDate"] = JWSPayloads.milliseconds(purchased)
        payload["originalPurchaseDate"] = JWSPayloads.milliseconds(purchased)
        payload["expiresDate"] = JWSPayloads.milliseconds(purchased.addingTimeInterval(30 * 86_400))
        payload["webOrderLineItemId"] = "8" + id
        if let revoked {
            payload["revocationDate"] = JWSPayloads.milliseconds(Date().addingTimeInterval(revoked * 86_400))
            payload["revocationReason"] = 0
        }
        return try minter.mint(json: payload)
    }

    @Test("the history's renewals, a refund and the renewal info are recorded; another account's family is refused; a second refresh waits")
    func refresh() async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            let ledger = InMemoryLedger()
            let verifier = try NotificationSyncTests.verifier(minter)
            // The app's client sent the first purchase, 65 days ago; a second family belongs to someone else.
            let first = try Self.transaction(minter, id: "6100000000000001", original: "6100000000000001", start: -65)
            let foreign = try Self.transaction(minter, id: "6200000000000001", original: "6200000000000001", start: -10)
            try await ledger.record(try await verifier.verifyTransaction(bytes: Array(first.utf8)).proof, for: try AccountID("ana"))
            try await ledger.record(try await verifier.verifyTransaction(bytes: Array(foreign.utf8)).proof, for: try AccountID("ben"))
            // Apple knows two renewals (the second current) and a refund of the first renewal.
            let renewal = try Self.transaction(minter, id: "6100000000000002", original: "6100000000000001", start: -35, revoked: -20)
            let current = try Self.transaction(minter, id: "6100000000000003", original: "6100000000000001", start: -5)
            let renewalInfo = try minter.mint(json: JWSPayloads.renewalInfo(
                signedDate: Date().addingTimeInterval(-60), originalTransactionId: "6100000000000001", productId: "pro.monthly", autoRenewStatus: 0
            ))
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) {
                $0.history["6100000000000001"] = [first, renewal, current, foreign]
                $0.historyPageSize = 2
                $0.statuses["6100000000000001"] = [("21000001", [AppleStandIn.SubscriptionFixture(
                    status: 1, originalTransactionId: "6100000000000001", signedTransactionInfo: current, signedRenewalInfo: renewalInfo
                )])]
            }
            let client = try makeSync(ledger, "x", NotificationSyncSettings()).client
            let refresher = AccountRefresher(clients: [client], ledger: ledger, minimumInterval: .seconds(60), logger: NotificationSyncTests.logger)
            let refreshStarted = Date()
            let report = try await refresher.refresh(try AccountID("ana"))
            #expect(report.families == 1)
            #expect(report.transactions == 4)
            #expect(report.newTransactions == 2)
            #expect(report.refused == ["6200000000000001: owned_by_another_account"])
            let ana = try await ledger.entitlements(for: try AccountID("ana"), at: Date())
            let subscription = try #require(ana.subscriptions.first)
            #expect(subscription.isEntitled)
            #expect(subscription.transactions.map(\.transactionId).sorted() == ["6100000000000001", "6100000000000002", "6100000000000003"])
            #expect(subscription.transactions.first { $0.transactionId == "6100000000000002" }?.isRevoked == true)
            #expect(subscription.willAutoRenew == false)
            // Every page of the history was read.
            let pages = standIn.serverAPICalls.filter { $0.route == "inApps/v2/history" }.map { $0.query["revision"]?.first }
            #expect(pages == [nil, "r2"])

            // Too soon: refused with the time to come back, without asking Apple.
            let calls = standIn.serverAPICalls.count
            let error = await #expect(throws: AccountRefreshError.self) { try await refresher.refresh(try AccountID("ana")) }
            #expect(error?.code == .rateLimited)
            // A minute after the refresh started (however slow the machine ran the steps between).
            #expect((error?.retryAfter ?? .distantPast) >= refreshStarted.addingTimeInterval(60))
            #expect((error?.retryAfter ?? .distantPast) > Date())
            #expect(standIn.serverAPICalls.count == calls)
        }
    }

    @Test("Apple's 429 beyond what the client waits, and a forged history page: the refresh fails and records nothing")
    func failures() async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            let ledger = InMemoryLedger()
            let verifier = try NotificationSyncTests.verifier(minter)
            let first = try Self.transaction(minter, id: "6300000000000001", original: "6300000000000001", start: -40)
            try await ledger.record(try await verifier.verifyTransaction(bytes: Array(first.utf8)).proof, for: try AccountID("cy"))
            let stranger = JWSMinter(authority: try TestCertificateAuthority(keyKind: .p256, shape: .init(label: "Stranger")))
            let forged = try Self.transaction(stranger, id: "6300000000000002", original: "6300000000000001", start: -10)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { $0.history["6300000000000001"] = [first, forged] }
            let client = try makeSync(ledger, "x", NotificationSyncSettings()).client
            let refresher = AccountRefresher(clients: [client], ledger: ledger, minimumInterval: .zero, logger: NotificationSyncTests.logger)
            let before = try await ledger.events(after: 0, limit: 1000)

            standIn.failNext(1, of: .serverAPI, with: .rateLimited(retryAfter: "120"))
            let limited = await #expect(throws: AccountRefreshError.self) { try await refresher.refresh(try AccountID("cy")) }
            #expect(limited?.code == .appleUnavailable)
            #expect((limited?.retryAfter ?? .distantPast) > Date().addingTimeInterval(100))

            let rejected = await #expect(throws: AccountRefreshError.self) { try await refresher.refresh(try AccountID("cy")) }
            #expect(rejected?.code == .rejected)
            #expect(try await ledger.events(after: 0, limit: 1000) == before)
        }
    }

    @Test("a family first seen in a proof refreshes its account from Apple: once, in one instance, again after Apple recovers")
    func firstSight() async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            let ledger = InMemoryLedger()
            let verifier = try NotificationSyncTests.verifier(minter)
            let client = try makeSync(ledger, "x", NotificationSyncSettings()).client
            let refresher = AccountRefresher(clients: [client], ledger: ledger, minimumInterval: .seconds(60), logger: NotificationSyncTests.logger)
            let follower = FirstSightRefresh(refresher: refresher, ledger: ledger, holder: "one", logger: NotificationSyncTests.logger)
            let other = FirstSightRefresh(refresher: refresher, ledger: ledger, holder: "two", logger: NotificationSyncTests.logger)
            // An account recorded before the service existed is not refreshed: it starts at the stream's end.
            let old = try Self.transaction(minter, id: "6400000000000001", original: "6400000000000001", start: -40)
            try await ledger.record(try await verifier.verifyTransaction(bytes: Array(old.utf8)).proof, for: try AccountID("old"))
            #expect(await follower.processOnce() == .progressed)
            #expect(await follower.processOnce() == .idle)
            #expect(await other.processOnce() == .notHolder)

            let first = try Self.transaction(minter, id: "6500000000000001", original: "6500000000000001", start: -40)
            let renewal = try Self.transaction(minter, id: "6500000000000002", original: "6500000000000001", start: -10)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { $0.history["6500000000000001"] = [first, renewal] }
            try await ledger.record(try await verifier.verifyTransaction(bytes: Array(first.utf8)).proof, for: try AccountID("dee"))
            #expect(await follower.processOnce() == .progressed)
            #expect(try await ledger.transaction("6500000000000002", in: .test)?.account?.rawValue == "dee")
            // The refresh's own renewal event does not refresh again.
            #expect(await follower.processOnce() == .progressed)
            #expect(await follower.processOnce() == .idle)
            #expect(standIn.serverAPICalls.filter { $0.route == "inApps/v2/history" }.map { $0.query.isEmpty } == [true])

            // Apple is down when eve's purchase arrives: her event waits, and is handled once Apple is back.
            let eves = try Self.transaction(minter, id: "6600000000000001", original: "6600000000000001", start: -40)
            let evesRenewal = try Self.transaction(minter, id: "6600000000000002", original: "6600000000000001", start: -10)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { $0.history["6600000000000001"] = [eves, evesRenewal] }
            try await ledger.record(try await verifier.verifyTransaction(bytes: Array(eves.utf8)).proof, for: try AccountID("eve"))
            standIn.failAlways(.serverAPI, with: .httpStatus(503))
            guard case .waitUntil = await follower.processOnce() else {
                Issue.record("expected to wait for Apple")
                return
            }
            #expect(try await ledger.transaction("6600000000000002", in: .test) == nil)
            standIn.stopFailing(.serverAPI)
            // A failed refresh does not count against the account's limit.
            #expect(await follower.processOnce() == .progressed)
            #expect(try await ledger.transaction("6600000000000002", in: .test)?.account?.rawValue == "eve")

            // Retention deleted events past the follower's place (a follower stopped for days):
            // it goes on from the oldest kept instead of failing on the expired place forever.
            #expect(try await ledger.saveLeasedState(FirstSightRefresh.stateName, value: "1", holder: "one", now: Date(), lease: .seconds(60)))
            let pruning = try await ledger.pruneEvents(recordedBefore: Date().addingTimeInterval(3600), limit: 1000)
            #expect(pruning.prunedThrough > 1)
            #expect(await follower.processOnce() == .progressed)
            #expect(try await ledger.acquireLease(on: FirstSightRefresh.stateName, holder: "one", now: Date(), lease: .seconds(60))?.value == "0")
            #expect(await follower.processOnce() == .progressed)
            #expect(await follower.processOnce() == .idle)
        }
    }
}

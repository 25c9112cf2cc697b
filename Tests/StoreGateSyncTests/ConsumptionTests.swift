import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateLedger
import StoreGateSignedData
import StoreGateSync
import StoreGateTestSupport
import Synchronization
import Testing

/// Apple's consumption requests answered with Send Consumption Information, from the ledger.
@Suite("App Store sync: consumption requests")
struct ConsumptionTests {
    /// A clock the test moves.
    final class Clock: Sendable {
        private let offset = Mutex<TimeInterval>(0)
        func advance(_ seconds: TimeInterval) { offset.withLock { $0 += seconds } }
        var now: @Sendable () -> Date { { Date().addingTimeInterval(self.offset.withLock { $0 }) } }
    }

    static func settings(window: Duration = .seconds(12 * 3600)) -> ConsumptionSettings {
        var settings = ConsumptionSettings()
        settings.customerConsented = true
        settings.sampleContentProvided = true
        settings.refundPreference = .grantProrated
        settings.window = window
        return settings
    }

    /// A signed transaction of `type`.
    static func transaction(
        _ minter: JWSMinter, id: String, product: String, type: String, quantity: Int = 1, purchased: Date = Date().addingTimeInterval(-3600),
        expires: Date? = nil
    ) throws -> String {
        var payload = JWSPayloads.transaction(
            bundleId: SyncStory.bundleId, signedDate: Date().addingTimeInterval(-60), transactionId: id, originalTransactionId: id,
            productId: product, type: type, quantity: quantity
        )
        payload["purchaseDate"] = JWSPayloads.milliseconds(purchased)
        payload["originalPurchaseDate"] = JWSPayloads.milliseconds(purchased)
        if let expires { payload["expiresDate"] = JWSPayloads.milliseconds(expires) }
        return try minter.mint(json: payload)
    }

    /// A signed `CONSUMPTION_REQUEST` about `signedTransaction`, signed at `signed`.
    static func signedRequest(_ minter: JWSMinter, _ signedTransaction: String, signed: Date = Date().addingTimeInterval(-60)) throws -> String {
        try minter.mint(json: JWSPayloads.notification(
            type: "CONSUMPTION_REQUEST", bundleId: SyncStory.bundleId, signedDate: signed, signedTransactionInfo: signedTransaction,
            notificationUUID: UUID().uuidString.lowercased()
        ))
    }

    /// A verified `CONSUMPTION_REQUEST` about `signedTransaction`, signed at `signed`.
    static func request(_ minter: JWSMinter, _ signedTransaction: String, signed: Date = Date().addingTimeInterval(-60)) async throws -> VerifiedNotification {
        try await verified(minter, try signedRequest(minter, signedTransaction, signed: signed))
    }

    /// A signed notification, verified as the webhook does.
    static func verified(_ minter: JWSMinter, _ signedPayload: String) async throws -> VerifiedNotification {
        try await NotificationSyncTests.verifier(minter).verifyNotification(bytes: Array(signedPayload.utf8)).notification
    }

    static func body(_ call: AppleStandIn.ConsumptionCall) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(call.body)) as? [String: Any])
    }

    /// A recorded transaction for the pure answer tests.
    static func recorded(
        _ type: ProductType, id: String = "1", account: String?, quantity: Int = 1, purchased: Date, expires: Date? = nil, revoked: Date? = nil
    ) throws -> RecordedTransaction {
        RecordedTransaction(
            environment: .sandbox, transactionId: id, originalTransactionId: id, account: try account.map { try AccountID($0) }, bundleId: SyncStory.bundleId,
            productId: "p", productType: type, subscriptionGroup: "", quantity: quantity, purchaseDate: purchased, originalPurchaseDate: purchased,
            expiresDate: expires, revocationDate: revoked, revocationReason: nil, isUpgraded: false, webOrderLineItemId: nil,
            appAccountToken: nil, observedAt: purchased, source: .signedTransaction, proofDigest: nil
        )
    }

    @Test("each field follows the ledger: the requested purchase's consumed share, a non-renewing period's elapsed part, undelivered, nothing for subscriptions")
    func fields() throws {
        let settings = Self.settings()
        let now = Date()
        func answer(_ facts: ConsumptionFacts, _ settings: ConsumptionSettings = settings) -> ConsumptionInformation {
            ConsumptionAnswer(facts: facts, settings: settings, at: now).information
        }
        let coins = try Self.recorded(.consumable, account: "ana", quantity: 8, purchased: now)
        let threeUsed = answer(ConsumptionFacts(transaction: coins, allocation: ConsumptionAllocation(consumed: 3, transactions: [coins])))
        #expect(threeUsed.deliveryStatus == .delivered)
        #expect(threeUsed.consumptionPercentage == 37_500)
        #expect(threeUsed.refundPreference == .grantProrated)
        #expect(threeUsed.customerConsented && threeUsed.sampleContentProvided)

        // Nothing used: a prorated refund is the whole price; Apple refuses GRANT_PRORATED at 0.
        let untouched = ConsumptionAnswer(facts: ConsumptionFacts(transaction: coins, allocation: ConsumptionAllocation(consumed: 0, transactions: [coins])), settings: settings, at: now)
        #expect(untouched.information.consumptionPercentage == 0)
        #expect(untouched.information.refundPreference == .grantFull)
        #expect(untouched.adjustment?.contains("GRANT_PRORATED → GRANT_FULL") == true)
        #expect(untouched.information.brokenRule == nil)

        let pass = try Self.recorded(.nonRenewing, account: "ana", purchased: now.addingTimeInterval(-25 * 86_400), expires: now.addingTimeInterval(75 * 86_400))
        #expect(answer(ConsumptionFacts(transaction: pass)).consumptionPercentage == 25_000)
        let revokedPass = try Self.recorded(
            .nonRenewing, account: "ana", purchased: now.addingTimeInterval(-50 * 86_400), expires: now.addingTimeInterval(50 * 86_400),
            revoked: now.addingTimeInterval(-40 * 86_400)
        )
        #expect(answer(ConsumptionFacts(transaction: revokedPass)).consumptionPercentage == 10_000)
        let ended = try Self.recorded(.nonRenewing, account: "ana", purchased: now.addingTimeInterval(-50 * 86_400), expires: now.addingTimeInterval(-1))
        let endedAnswer = ConsumptionAnswer(facts: ConsumptionFacts(transaction: ended), settings: settings, at: now)
        #expect(endedAnswer.information.consumptionPercentage == 100_000)
        #expect(endedAnswer.information.refundPreference == .decline)  // a prorated refund of a used-up pass is none

        for type in [ProductType.autoRenewable, .nonConsumable] {
            let information = answer(ConsumptionFacts(transaction: try Self.recorded(type, account: "ana", purchased: now)))
            #expect(information.deliveryStatus == .delivered)
            #expect(information.consumptionPercentage == nil)
            #expect(information.brokenRule == nil)
        }
        // Apple computes an auto-renewable subscription's share itself: GRANT_PRORATED stands.
        #expect(answer(ConsumptionFacts(transaction: try Self.recorded(.autoRenewable, account: "ana", purchased: now))).refundPreference == .grantProrated)
        // A non-consumable's share is unknown: no preference rather than one Apple refuses.
        let nonConsumable = ConsumptionAnswer(facts: ConsumptionFacts(transaction: try Self.recorded(.nonConsumable, account: "ana", purchased: now)), settings: settings, at: now)
        #expect(nonConsumable.information.refundPreference == nil)
        #expect(nonConsumable.adjustment?.contains("does not know how much") == true)

        for facts in [ConsumptionFacts(transaction: nil), ConsumptionFacts(transaction: try Self.recorded(.consumable, account: nil, purchased: now))] {
            let information = answer(facts)
            #expect(information.deliveryStatus == .undeliveredOther)
            #expect(information.consumptionPercentage == 0)
            #expect(information.refundPreference == .grantFull)  // nothing delivered, nothing used
        }
        // An undelivered auto-renewable subscription: no percentage at all (Apple refuses one for them).
        let undeliveredSubscription = answer(ConsumptionFacts(transaction: nil, productType: .autoRenewable))
        #expect(undeliveredSubscription.consumptionPercentage == nil)
        #expect(undeliveredSubscription.brokenRule == nil)

        var plain = settings
        plain.refundPreference = .decline
        plain.sampleContentProvided = false
        let declined = answer(ConsumptionFacts(transaction: try Self.recorded(.autoRenewable, account: "ana", purchased: now)), plain)
        #expect(declined.refundPreference == .decline)
        #expect(!declined.sampleContentProvided)
    }

    @Test("a request seen by the webhook and the sync is answered once with the ledger's figures; a purchase no account claimed is undelivered; no consent, nothing sent")
    func answersOnce() async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { _ in }  // Apple knows the app
            let ledger = InMemoryLedger()
            let client = try makeSync(ledger, "x", NotificationSyncSettings()).client
            let verifier = try NotificationSyncTests.verifier(minter)
            let coins = try Self.transaction(minter, id: "7300000000000001", product: "coins.10", type: "Consumable", quantity: 10)
            try await ledger.record(try await verifier.verifyTransaction(bytes: Array(coins.utf8)).proof, for: try AccountID("ana"))
            try await ledger.consume("coins.10", quantity: 4, idempotencyKey: "k1", for: try AccountID("ana"), at: Date())
            let responder = ConsumptionResponder(clients: [client], ledger: ledger, settings: Self.settings(), holder: "one", logger: NotificationSyncTests.logger)
            let other = ConsumptionResponder(clients: [client], ledger: ledger, settings: Self.settings(), holder: "two", logger: NotificationSyncTests.logger)

            let request = try await Self.request(minter, coins)
            try await ledger.apply(request)
            try await responder.enqueue(request)  // the webhook
            try await other.enqueue(request)  // the sync, on another instance
            // A purchase the app never presented: the notification is all the ledger knows.
            let stray = try Self.transaction(minter, id: "7300000000000002", product: "coins.10", type: "Consumable")
            let strayRequest = try await Self.request(minter, stray)
            try await ledger.apply(strayRequest)
            try await responder.enqueue(strayRequest)

            async let first = responder.processOnce()
            async let second = other.processOnce()
            let passes = await [first, second]
            let afterPasses = try await ConsumptionResponder.summary(of: ledger)
            #expect(passes.map(\.sent).reduce(0, +) == 2, "\(afterPasses)")
            #expect(await responder.processOnce().sent == 0)
            let calls = standIn.consumptionRequests
            #expect(calls.map(\.transactionId).sorted() == ["7300000000000001", "7300000000000002"])
            let delivered = try Self.body(try #require(calls.first { $0.transactionId == "7300000000000001" }))
            #expect(delivered["deliveryStatus"] as? String == "DELIVERED")
            #expect(delivered["consumptionPercentage"] as? Int == 40_000)
            #expect(delivered["refundPreference"] as? String == "GRANT_PRORATED")
            #expect(delivered["sampleContentProvided"] as? Bool == true)
            #expect(delivered["customerConsented"] as? Bool == true)
            let undelivered = try Self.body(try #require(calls.first { $0.transactionId == "7300000000000002" }))
            #expect(undelivered["deliveryStatus"] as? String == "UNDELIVERED_OTHER")
            #expect(undelivered["consumptionPercentage"] as? Int == 0)
            #expect(undelivered["refundPreference"] as? String == "GRANT_FULL")  // GRANT_PRORATED needs a share above 0
            #expect(standIn.consumptionRefusals.isEmpty)
            let summary = try await ConsumptionResponder.summary(of: ledger)
            #expect(summary.counts == [.sent: 2])
            #expect(summary.adjusted == 1)
            #expect(summary.lastAdjustmentTransactionId == "7300000000000002")

            // Consent not configured: the request is not even queued.
            var off = Self.settings()
            off.customerConsented = false
            let silent = ConsumptionResponder(clients: [client], ledger: ledger, settings: off, holder: "three", logger: NotificationSyncTests.logger)
            let later = try await Self.request(minter, coins)
            try await silent.enqueue(later)
            #expect(await silent.processOnce() == ConsumptionResponder.Pass())
            #expect(try await ConsumptionResponder.summary(of: ledger).counts == [.sent: 2])
            #expect(standIn.consumptionRequests.count == 2)
        }
    }

    @Test("Apple down, then up: retried with backoff and Apple's Retry-After; refused for good: failed; past Apple's 12 hours: expired, never sent")
    func retriesAndWindow() async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { _ in }  // Apple knows the app
            let ledger = InMemoryLedger()
            let client = try makeSync(ledger, "x", NotificationSyncSettings()).client
            let clock = Clock()
            let responder = ConsumptionResponder(
                clients: [client], ledger: ledger, settings: Self.settings(), holder: "one", logger: NotificationSyncTests.logger, now: clock.now
            )
            let coins = try Self.transaction(minter, id: "7400000000000001", product: "coins.10", type: "Consumable")
            let request = try await Self.request(minter, coins)
            try await responder.enqueue(request)

            // Every attempt the client makes fails: the answer waits 30 s, then 60 s.
            standIn.failNext(4, of: .serverAPI, with: .httpStatus(503))
            #expect(await responder.processOnce().retried == 1)
            #expect(await responder.processOnce() == ConsumptionResponder.Pass())  // not due yet
            clock.advance(31)
            standIn.failNext(1, of: .serverAPI, with: .rateLimited(retryAfter: "600"))
            #expect(await responder.processOnce().retried == 1)
            clock.advance(61)
            #expect(await responder.processOnce() == ConsumptionResponder.Pass())  // Apple said 600 s
            clock.advance(540)
            #expect(await responder.processOnce().sent == 1)
            #expect(standIn.consumptionRequests.map(\.transactionId) == ["7400000000000001"])

            // Refused for good (Apple does not know the transaction): failed, reported, not retried.
            let unknown = try await Self.request(minter, try Self.transaction(minter, id: "7400000000000002", product: "coins.10", type: "Consumable"))
            try await responder.enqueue(unknown)
            standIn.failNext(1, of: .serverAPI, with: .apiError(.transactionIdNotFound, httpStatus: 404))
            #expect(await responder.processOnce().failed == 1)
            clock.advance(3600)
            #expect(await responder.processOnce() == ConsumptionResponder.Pass())
            let summary = try await ConsumptionResponder.summary(of: ledger)
            #expect(summary.counts == [.sent: 1, .failed: 1])
            #expect(summary.lastErrorTransactionId == "7400000000000002")
            #expect(summary.lastError?.contains("api_error") == true, "\(summary.lastError ?? "")")

            // The window closes during retries: expired.
            let late = try await Self.request(minter, try Self.transaction(minter, id: "7400000000000003", product: "coins.10", type: "Consumable"), signed: clock.now())
            try await responder.enqueue(late)
            standIn.failNext(4, of: .serverAPI, with: .httpStatus(500))
            #expect(await responder.processOnce().retried == 1)
            clock.advance(12 * 3600 + 1)
            #expect(await responder.processOnce().expired == 1)
            // Recovered by the sync after the window: kept as expired at once.
            let old = try await Self.request(
                minter, try Self.transaction(minter, id: "7400000000000004", product: "coins.10", type: "Consumable"),
                signed: clock.now().addingTimeInterval(-13 * 3600)
            )
            try await responder.enqueue(old)
            #expect(await responder.processOnce() == ConsumptionResponder.Pass())
            #expect(try await ConsumptionResponder.summary(of: ledger).counts == [.sent: 1, .failed: 1, .expired: 2])
            #expect(standIn.consumptionRequests.count == 1)
            // Finished requests are kept 30 days for the status, then deleted.
            clock.advance(29 * 86_400)
            _ = await responder.processOnce()
            #expect(try await ConsumptionResponder.summary(of: ledger).counts == [.sent: 1, .failed: 1, .expired: 2])
            clock.advance(2 * 86_400)
            _ = await responder.processOnce()
            #expect(try await ledger.leasedStates(prefix: ConsumptionResponder.statePrefix).isEmpty)
        }
    }
}

import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateLedger
import StoreGateSignedData
import StoreGateSync
import StoreGateTestSupport
import Testing

/// The second hold-out story: consumption requests about one of several purchases of a
/// consumable, arriving by webhook, by history, twice.
@Suite("App Store sync: consumption answers per purchase")
struct ConsumptionHoldOutTests {
    static let five = "7500000000000001"
    static let ten = "7500000000000002"

    /// The story's purchases: 5 coins three days ago, 10 coins two days ago (same product).
    struct Story {
        let five: String
        let ten: String
        let fiveRequest: String
        let tenRequest: String

        init(_ minter: JWSMinter) throws {
            let now = Date()
            five = try ConsumptionTests.transaction(
                minter, id: ConsumptionHoldOutTests.five, product: "coins", type: "Consumable", quantity: 5, purchased: now.addingTimeInterval(-3 * 86_400)
            )
            ten = try ConsumptionTests.transaction(
                minter, id: ConsumptionHoldOutTests.ten, product: "coins", type: "Consumable", quantity: 10, purchased: now.addingTimeInterval(-2 * 86_400)
            )
            fiveRequest = try ConsumptionTests.signedRequest(minter, five)
            tenRequest = try ConsumptionTests.signedRequest(minter, ten)
        }
    }

    /// The bodies sent, by transaction id, as JSON objects.
    static func bodies(_ calls: [AppleStandIn.ConsumptionCall]) throws -> [String: [String: Any]] {
        var bodies: [String: [String: Any]] = [:]
        for call in calls { bodies[call.transactionId] = try ConsumptionTests.body(call) }
        return bodies
    }

    @Test("5 + 10 coins, 3 used: the 5-coin purchase answers 60 %, the 10-coin one 0 %; requests arriving by webhook and by history twice are answered once")
    func holdOutStory() async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            let story = try Story(minter)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) {
                $0.transactions = [Self.five: story.five, Self.ten: story.ten]
                $0.notifications = [story.fiveRequest, story.tenRequest]  // Apple's history holds both requests
            }
            let ledger = InMemoryLedger()
            let verifier = try NotificationSyncTests.verifier(minter)
            for signed in [story.five, story.ten] {
                try await ledger.record(try await verifier.verifyTransaction(bytes: Array(signed.utf8)).proof, for: try AccountID("ana"))
            }
            try await ledger.consume("coins", quantity: 3, idempotencyKey: "spend", for: try AccountID("ana"), at: Date())
            let client = try makeSync(ledger, "one", NotificationSyncSettings()).client
            let responder = ConsumptionResponder(clients: [client], ledger: ledger, settings: ConsumptionTests.settings(), holder: "one", logger: NotificationSyncTests.logger)

            // The webhook takes the 5-coin request; the history brings both, twice.
            let webhook = try await ConsumptionTests.verified(minter, story.fiveRequest)
            try await ledger.apply(webhook)
            try await responder.enqueue(webhook)
            let sync = NotificationHistorySync(client: client, ledger: ledger, holder: "one", consumption: responder, logger: NotificationSyncTests.logger)
            let first = await sync.run()
            let second = await sync.run()
            #expect(first.outcome == .completed && second.outcome == .completed, "\(first) \(second)")
            #expect(await responder.processOnce().sent == 2)
            #expect(await responder.processOnce() == ConsumptionResponder.Pass())

            let calls = standIn.consumptionRequests
            #expect(calls.map(\.transactionId).sorted() == [Self.five, Self.ten])
            let bodies = try Self.bodies(calls)
            #expect(bodies[Self.five]?["consumptionPercentage"] as? Int == 60_000)  // 3 of its 5 coins
            #expect(bodies[Self.five]?["refundPreference"] as? String == "GRANT_PRORATED")
            #expect(bodies[Self.ten]?["consumptionPercentage"] as? Int == 0)  // none of its 10
            #expect(bodies[Self.ten]?["refundPreference"] as? String == "GRANT_FULL")  // Apple refuses GRANT_PRORATED at 0
            #expect(standIn.consumptionRefusals.isEmpty)

            let summary = try await ConsumptionResponder.summary(of: ledger)
            #expect(summary.counts == [.sent: 2])
            #expect(summary.adjusted == 1)
            #expect(summary.lastAdjustmentTransactionId == Self.ten)
            #expect(summary.lastAdjustment?.contains("GRANT_PRORATED → GRANT_FULL") == true)
            let recent = Dictionary(uniqueKeysWithValues: summary.recent.map { ($0.transactionId, $0) })
            #expect(recent[Self.five]?.consumptionPercentage == 60_000)
            #expect(recent[Self.five]?.preferenceSource == ConsumptionAnswer.fixedPreferenceSource)
            #expect(recent[Self.five]?.adjustment == nil)
            #expect(recent[Self.ten]?.refundPreference == "GRANT_FULL")
        }
    }

    /// One fact of the story, applied to a ledger.
    enum Fact: CaseIterable, Sendable {
        case buyFive, buyTen, useThree, requests
    }

    @Test(
        "the same facts in any arrival order give the same answers",
        arguments: [
            [Fact.buyFive, .buyTen, .useThree, .requests],
            [.buyTen, .buyFive, .useThree, .requests],
            [.buyTen, .useThree, .buyFive, .requests],  // the 3 coins were used before the older purchase was presented
            [.requests, .buyTen, .useThree, .buyFive],  // Apple's requests came before the purchases
            [.buyFive, .useThree, .requests, .buyTen],
        ]
    )
    func arrivalOrder(_ order: [Fact]) async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            let story = try Story(minter)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { $0.transactions = [Self.five: story.five, Self.ten: story.ten] }
            let (sqlite, directory) = try NotificationSyncTests.sqlite()
            defer { try? FileManager.default.removeItem(at: directory) }
            let verifier = try NotificationSyncTests.verifier(minter)
            var answers: [[String: [String: Any]]] = []
            for ledger in [InMemoryLedger() as any Ledger, sqlite] {
                let client = try makeSync(ledger, "one", NotificationSyncSettings()).client
                let responder = ConsumptionResponder(clients: [client], ledger: ledger, settings: ConsumptionTests.settings(), holder: "one", logger: NotificationSyncTests.logger)
                for fact in order {
                    switch fact {
                    case .buyFive, .buyTen:
                        let signed = fact == .buyFive ? story.five : story.ten
                        try await ledger.record(try await verifier.verifyTransaction(bytes: Array(signed.utf8)).proof, for: try AccountID("ana"))
                    case .useThree:
                        try await ledger.consume("coins", quantity: 3, idempotencyKey: "spend", for: try AccountID("ana"), at: Date())
                    case .requests:
                        for signed in [story.fiveRequest, story.tenRequest] {
                            let request = try await ConsumptionTests.verified(minter, signed)
                            try await ledger.apply(request)
                            try await responder.enqueue(request)
                        }
                    }
                }
                let before = standIn.consumptionRequests.count
                #expect(await responder.processOnce().sent == 2)
                answers.append(try Self.bodies(Array(standIn.consumptionRequests[before...])))
            }
            for bodies in answers {
                #expect(bodies[Self.five]?["consumptionPercentage"] as? Int == 60_000, "\(order)")
                #expect(bodies[Self.ten]?["consumptionPercentage"] as? Int == 0, "\(order)")
                #expect(bodies[Self.five]?["deliveryStatus"] as? String == "DELIVERED", "\(order)")
                #expect(bodies[Self.ten]?["refundPreference"] as? String == "GRANT_FULL", "\(order)")
            }
            #expect(standIn.consumptionRefusals.isEmpty)
        }
    }

    @Test("every unit used: never GRANT_PRORATED at 100 % (Apple refuses it); DECLINE is sent and the status says why")
    func allUsed() async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            let story = try Story(minter)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { $0.transactions = [Self.five: story.five, Self.ten: story.ten] }
            let ledger = InMemoryLedger()
            let verifier = try NotificationSyncTests.verifier(minter)
            for signed in [story.five, story.ten] {
                try await ledger.record(try await verifier.verifyTransaction(bytes: Array(signed.utf8)).proof, for: try AccountID("ana"))
            }
            try await ledger.consume("coins", quantity: 12, idempotencyKey: "spend", for: try AccountID("ana"), at: Date())
            let client = try makeSync(ledger, "one", NotificationSyncSettings()).client
            let responder = ConsumptionResponder(clients: [client], ledger: ledger, settings: ConsumptionTests.settings(), holder: "one", logger: NotificationSyncTests.logger)
            for signed in [story.fiveRequest, story.tenRequest] {
                let request = try await ConsumptionTests.verified(minter, signed)
                try await ledger.apply(request)
                try await responder.enqueue(request)
            }
            #expect(await responder.processOnce().sent == 2)
            let bodies = try Self.bodies(standIn.consumptionRequests)
            #expect(bodies[Self.five]?["consumptionPercentage"] as? Int == 100_000)  // all 5 used
            #expect(bodies[Self.five]?["refundPreference"] as? String == "DECLINE")
            #expect(bodies[Self.ten]?["consumptionPercentage"] as? Int == 70_000)  // 7 of 10
            #expect(bodies[Self.ten]?["refundPreference"] as? String == "GRANT_PRORATED")
            #expect(standIn.consumptionRefusals.isEmpty)
            let summary = try await ConsumptionResponder.summary(of: ledger)
            #expect(summary.counts == [.sent: 2])
            #expect(summary.adjusted == 1)
            #expect(summary.lastAdjustmentTransactionId == Self.five)
            let adjustment = try #require(summary.lastAdjustment)
            #expect(adjustment.contains("GRANT_PRORATED → DECLINE") && adjustment.contains("100000"), "\(adjustment)")

            // What was sent before: GRANT_PRORATED with 100 %. Apple (the stand-in) refuses it.
            let old = Array(#"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":true,"consumptionPercentage":100000,"refundPreference":"GRANT_PRORATED"}"#.utf8)
            #expect(AppleStandIn.consumptionRefusal(body: old, productType: .consumable) == .grantProratedWithoutPartialPercentage)
        }
    }

    @Test("a refund policy chooses the preference per request, by consumed share and account age")
    func policyPerRequest() async throws {
        try await NotificationSyncTests.withStandIn { standIn, minter, makeSync in
            let story = try Story(minter)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { $0.transactions = [Self.five: story.five, Self.ten: story.ten] }
            let ledger = InMemoryLedger()
            let verifier = try NotificationSyncTests.verifier(minter)
            for signed in [story.five, story.ten] {
                try await ledger.record(try await verifier.verifyTransaction(bytes: Array(signed.utf8)).proof, for: try AccountID("ana"))
            }
            try await ledger.consume("coins", quantity: 6, idempotencyKey: "spend", for: try AccountID("ana"), at: Date())
            var settings = ConsumptionTests.settings()
            settings.refundPreference = .decline
            // The account is 3 days old: the age rule never holds before the share rules here.
            settings.refundPolicy = try ConsumptionRefundPolicy(parsing: "consumed>=80%:decline; age<1d:grant_full; consumed>0%:grant_prorated")
            let client = try makeSync(ledger, "one", NotificationSyncSettings()).client
            let responder = ConsumptionResponder(clients: [client], ledger: ledger, settings: settings, holder: "one", logger: NotificationSyncTests.logger)
            for signed in [story.fiveRequest, story.tenRequest] {
                let request = try await ConsumptionTests.verified(minter, signed)
                try await ledger.apply(request)
                try await responder.enqueue(request)
            }
            #expect(await responder.processOnce().sent == 2)
            let bodies = try Self.bodies(standIn.consumptionRequests)
            #expect(bodies[Self.five]?["refundPreference"] as? String == "DECLINE")  // 100 % used: rule 1
            #expect(bodies[Self.ten]?["consumptionPercentage"] as? Int == 10_000)  // 1 of 10
            #expect(bodies[Self.ten]?["refundPreference"] as? String == "GRANT_PRORATED")  // rule 3
            let recent = Dictionary(uniqueKeysWithValues: try await ConsumptionResponder.summary(of: ledger).recent.map { ($0.transactionId, $0) })
            #expect(recent[Self.five]?.preferenceSource == "rule consumed>=80%:decline")
            #expect(recent[Self.ten]?.preferenceSource == "rule consumed>0%:grant_prorated")
            #expect(recent[Self.five]?.adjustment == nil)
            #expect(standIn.consumptionRefusals.isEmpty)
        }
    }
}

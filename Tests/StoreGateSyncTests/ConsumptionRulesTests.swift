import Foundation
import Logging
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateHTTP
import StoreGateLedger
import StoreGateSync
import StoreGateTestSupport
import Testing

/// The pieces of a consumption answer on their own: the per-purchase allocation, the refund
/// policy, Apple's rules as the client applies them, and as the stand-in enforces them.
@Suite("App Store sync: consumption rules")
struct ConsumptionRulesTests {
    // MARK: Allocation

    @Test("consumed units go to the oldest purchase first, by purchase date then transaction id; refunded purchases take none")
    func allocation() throws {
        let day: TimeInterval = 86_400
        let start = Date(timeIntervalSince1970: 1_750_000_000)
        let old = try ConsumptionTests.recorded(.consumable, id: "900", account: "ana", quantity: 5, purchased: start)
        let tiedLow = try ConsumptionTests.recorded(.consumable, id: "1000", account: "ana", quantity: 2, purchased: start.addingTimeInterval(day))
        let tiedHigh = try ConsumptionTests.recorded(.consumable, id: "999", account: "ana", quantity: 2, purchased: start.addingTimeInterval(day))
        let refunded = try ConsumptionTests.recorded(.consumable, id: "5", account: "ana", quantity: 10, purchased: start.addingTimeInterval(-day), revoked: start)
        let shuffled = [tiedLow, refunded, old, tiedHigh]

        let six = ConsumptionAllocation(consumed: 6, transactions: shuffled)
        #expect(six.consumedUnits == ["900": 5, "999": 1])  // 999 before 1000: numerically, not by text
        #expect(six.consumptionPercentage(of: "900") == 100_000)
        #expect(six.consumptionPercentage(of: "999") == 50_000)
        #expect(six.consumptionPercentage(of: "1000") == 0)
        #expect(six.consumptionPercentage(of: "5") == 0)  // refunded: holds no units
        #expect(six.consumptionPercentage(of: "404") == nil)  // not among them
        #expect(ConsumptionAllocation(consumed: 6, transactions: shuffled.reversed()) == six)

        // More consumed than remains bought (a refund of used units): every purchase at most full.
        let over = ConsumptionAllocation(consumed: 40, transactions: shuffled)
        #expect(over.consumedUnits == ["900": 5, "999": 2, "1000": 2])
        #expect(ConsumptionAllocation(consumed: -3, transactions: shuffled).consumedUnits.isEmpty)

        // A share never reads as none or all unless it is.
        let big = try ConsumptionTests.recorded(.consumable, id: "1", account: "ana", quantity: 200_000, purchased: start)
        #expect(ConsumptionAllocation(consumed: 1, transactions: [big]).consumptionPercentage(of: "1") == 1)
        #expect(ConsumptionAllocation(consumed: 199_999, transactions: [big]).consumptionPercentage(of: "1") == 99_999)
        let three = try ConsumptionTests.recorded(.consumable, id: "1", account: "ana", quantity: 3, purchased: start)
        #expect(ConsumptionAllocation(consumed: 1, transactions: [three]).consumptionPercentage(of: "1") == 33_333)
    }

    // MARK: Policy

    static func request(_ type: ProductType? = .consumable, delivered: Bool = true, used: Int?, ageDays: Double?) -> ConsumptionRefundPolicy.Case {
        ConsumptionRefundPolicy.Case(
            productType: type, isDelivered: delivered, consumptionPercentage: used, accountAge: ageDays.map { .seconds($0 * 86_400) }
        )
    }

    static let policy = "consumed >= 80% : decline; age<7d & consumed<50%:grant_full; type=non_consumable:none; delivered=no:grant_full; consumed>0.5%:GRANT_PRORATED; *:decline"

    @Test(
        "the first rule that holds decides; a condition about something unknown does not hold",
        arguments: [
            (request(used: 90_000, ageDays: 1), "consumed>=80%:decline"),
            (request(used: 10_000, ageDays: 2), "age<7d&consumed<50%:grant_full"),
            (request(used: 60_000, ageDays: 2), "consumed>0.5%:grant_prorated"),
            (request(used: 10_000, ageDays: 30), "consumed>0.5%:grant_prorated"),
            (request(used: 500, ageDays: 30), "*:decline"),  // 0.5 % is not above 0.5 %
            (request(.nonConsumable, used: nil, ageDays: 1), "type=non_consumable:none"),  // unknown share: the age rule does not hold
            (request(delivered: false, used: 0, ageDays: nil), "delivered=no:grant_full"),  // no account: no age
            (request(.autoRenewable, delivered: false, used: nil, ageDays: nil), "delivered=no:grant_full"),
            (request(.autoRenewable, used: nil, ageDays: nil), "*:decline"),
        ]
    )
    func policyChooses(_ request: ConsumptionRefundPolicy.Case, _ expected: String) throws {
        let policy = try ConsumptionRefundPolicy(parsing: Self.policy)
        #expect(policy.rule(for: request)?.description == expected)
    }

    @Test("a policy reads back as it is written, and without a matching rule the fixed preference applies")
    func policyText() throws {
        let policy = try ConsumptionRefundPolicy(parsing: Self.policy)
        #expect(policy.rules.count == 6)
        #expect(policy.description == "consumed>=80%:decline; age<7d&consumed<50%:grant_full; type=non_consumable:none; delivered=no:grant_full; consumed>0.5%:grant_prorated; *:decline")
        #expect(try ConsumptionRefundPolicy(parsing: policy.description) == policy)
        #expect(try ConsumptionRefundPolicy(parsing: "age>=36h:grant_full\ntype!=auto_renewable:decline").description == "age>=36h:grant_full; type!=auto_renewable:decline")

        var settings = ConsumptionTests.settings()
        settings.refundPreference = .decline
        settings.refundPolicy = try ConsumptionRefundPolicy(parsing: "consumed>=50%:grant_full")
        let now = Date()
        let coins = try ConsumptionTests.recorded(.consumable, account: "ana", quantity: 10, purchased: now)
        let little = ConsumptionAnswer(facts: ConsumptionFacts(transaction: coins, allocation: ConsumptionAllocation(consumed: 1, transactions: [coins])), settings: settings, at: now)
        #expect(little.information.refundPreference == .decline)
        #expect(little.preferenceSource == ConsumptionAnswer.fixedPreferenceSource)
        let much = ConsumptionAnswer(facts: ConsumptionFacts(transaction: coins, allocation: ConsumptionAllocation(consumed: 6, transactions: [coins])), settings: settings, at: now)
        #expect(much.information.refundPreference == .grantFull)
        #expect(much.preferenceSource == "rule consumed>=50%:grant_full")
        // A rule choosing GRANT_PRORATED still meets Apple's rules.
        settings.refundPolicy = try ConsumptionRefundPolicy(parsing: "*:grant_prorated")
        let used = ConsumptionAnswer(facts: ConsumptionFacts(transaction: coins, allocation: ConsumptionAllocation(consumed: 10, transactions: [coins])), settings: settings, at: now)
        #expect(used.information.refundPreference == .decline)
        #expect(used.preferenceSource == "rule *:grant_prorated")
        #expect(used.adjustment != nil)
    }

    @Test(
        "a policy that does not parse is refused, naming the rule",
        arguments: [
            "", " ; ", "decline", "consumed>=50%", "consumed>=50%:refund", "consumed>=150%:decline", "consumed>=50:decline",
            "consumed>=5.1234%:decline", "consumed=>50%:decline", "age<7:decline", "age<7w:decline", "type<consumable:decline",
            "type=bundle:decline", "delivered=maybe:decline", "colour=red:decline", "consumed>=50%&:decline", "a:b:c",
            String(repeating: "*:decline;", count: 65), String(repeating: "x", count: 5000),
        ]
    )
    func policyRefused(_ text: String) {
        #expect(throws: SyncError(.invalidRefundPolicy, "")) { try ConsumptionRefundPolicy(parsing: text) }
    }

    // MARK: Apple's rules, as the client applies them

    @Test(
        "the client knows Apple's rules on the body, per product type",
        arguments: [
            (nil as Int?, ConsumptionInformation.DeliveryStatus.delivered, ConsumptionInformation.RefundPreference.grantProrated as ConsumptionInformation.RefundPreference?, ProductType.consumable as ProductType?, ConsumptionInformation.Rule.proratedNeedsPartialPercentage as ConsumptionInformation.Rule?),
            (0, .delivered, .grantProrated, .consumable, .proratedNeedsPartialPercentage),
            (100_000, .delivered, .grantProrated, .nonRenewing, .proratedNeedsPartialPercentage),
            (99_999, .delivered, .grantProrated, .consumable, nil),
            (100_000, .delivered, .decline, .consumable, nil),
            (nil, .delivered, .grantProrated, .autoRenewable, nil),
            (0, .delivered, nil, .autoRenewable, .noPercentageForAutoRenewable),
            (5, .undeliveredServerOutage, nil, .consumable, .undeliveredPercentageZero),
            (0, .undeliveredServerOutage, .grantFull, .consumable, nil),
            (100_001, .delivered, nil, nil, .percentageInRange),
            (-1, .delivered, nil, nil, .percentageInRange),
            (nil, .delivered, .grantProrated, nil, .proratedNeedsPartialPercentage),
        ]
    )
    func clientRules(
        _ percentage: Int?, _ delivery: ConsumptionInformation.DeliveryStatus, _ preference: ConsumptionInformation.RefundPreference?,
        _ type: ProductType?, _ broken: ConsumptionInformation.Rule?
    ) {
        let information = ConsumptionInformation(
            customerConsented: true, consumptionPercentage: percentage, deliveryStatus: delivery, sampleContentProvided: false,
            refundPreference: preference, productType: type
        )
        #expect(information.brokenRule == broken)
        var unconsented = information
        unconsented.customerConsented = false
        #expect(unconsented.brokenRule == .customerConsented)
    }

    // MARK: Apple's rules, as the stand-in enforces them

    static let valid = #"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":false"#

    @Test(
        "the stand-in refuses what Apple's documentation refuses, and takes the rest",
        arguments: [
            (valid + "}", ProductType.consumable as ProductType?, nil as AppleStandIn.ConsumptionRefusal?),
            (valid + #","consumptionPercentage":60000,"refundPreference":"GRANT_PRORATED"}"#, .consumable, nil),
            (valid + #","refundPreference":"GRANT_PRORATED"}"#, .autoRenewable, nil),
            (valid + #","consumptionPercentage":100000,"refundPreference":"DECLINE"}"#, .nonRenewing, nil),
            (#"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","sampleContentProvided":true,"consumptionPercentage":0}"#, .consumable, nil),
            (#"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_OTHER","sampleContentProvided":true}"#, .autoRenewable, nil),
            ("[]", .consumable, .malformed),
            ("{", .consumable, .malformed),
            (#"{"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#, .consumable, .invalidCustomerConsented),
            (#"{"customerConsented":false,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#, .consumable, .invalidCustomerConsented),
            (#"{"customerConsented":1,"deliveryStatus":"DELIVERED","sampleContentProvided":false}"#, .consumable, .invalidCustomerConsented),
            (#"{"customerConsented":true,"deliveryStatus":"DELIVERED_WORKING","sampleContentProvided":false}"#, .consumable, .invalidDeliveryStatus),
            (#"{"customerConsented":true,"sampleContentProvided":false}"#, .consumable, .invalidDeliveryStatus),
            (#"{"customerConsented":true,"deliveryStatus":"DELIVERED"}"#, .consumable, .invalidSampleContentProvided),
            (#"{"customerConsented":true,"deliveryStatus":"DELIVERED","sampleContentProvided":"no"}"#, .consumable, .invalidSampleContentProvided),
            (valid + #","refundPreference":"PREFER_GRANT"}"#, .consumable, .invalidRefundPreference),
            (valid + #","refundPreference":1}"#, .consumable, .invalidRefundPreference),
            (valid + #","consumptionPercentage":100001}"#, .consumable, .consumptionPercentageOutOfRange),
            (valid + #","consumptionPercentage":-1}"#, .consumable, .consumptionPercentageOutOfRange),
            (valid + #","consumptionPercentage":12.5}"#, .consumable, .consumptionPercentageOutOfRange),
            (#"{"customerConsented":true,"deliveryStatus":"UNDELIVERED_QUALITY_ISSUE","sampleContentProvided":true,"consumptionPercentage":5}"#, .consumable, .undeliveredConsumptionPercentageNonZero),
            (valid + #","consumptionPercentage":0}"#, .autoRenewable, .consumptionPercentageAutoRenewableSubscription),
            (valid + #","consumptionPercentage":40000,"refundPreference":"GRANT_PRORATED"}"#, .autoRenewable, .consumptionPercentageAutoRenewableSubscription),
            (valid + #","refundPreference":"GRANT_PRORATED"}"#, .consumable, .grantProratedWithoutPartialPercentage),
            (valid + #","refundPreference":"GRANT_PRORATED"}"#, nil, .grantProratedWithoutPartialPercentage),
            (valid + #","consumptionPercentage":0,"refundPreference":"GRANT_PRORATED"}"#, .nonConsumable, .grantProratedWithoutPartialPercentage),
            (valid + #","consumptionPercentage":100000,"refundPreference":"GRANT_PRORATED"}"#, .consumable, .grantProratedWithoutPartialPercentage),
        ]
    )
    func standInRefuses(_ body: String, _ type: ProductType?, _ refusal: AppleStandIn.ConsumptionRefusal?) {
        #expect(AppleStandIn.consumptionRefusal(body: Array(body.utf8), productType: type) == refusal)
    }

    @Test("over HTTP the stand-in answers a refusal with 400 and Apple's error code, records it, and takes nothing")
    func standInRefusesOverHTTP() async throws {
        let (credentials, account) = AppleStandIn.ServerAPIAccount.makeTestPair(bundleId: SyncStory.bundleId)
        let minter = try JWSMinter.shared()
        let subscription = try ConsumptionTests.transaction(minter, id: "7600000000000001", product: "pro.monthly", type: "Auto-Renewable Subscription")
        try await AppleStandIn.run { standIn in
            standIn.setServerAPIAccount(account)
            standIn.updateServerAPIData(.sandbox, bundleId: SyncStory.bundleId) { $0.transactions = ["7600000000000001": subscription] }
            let transport = AsyncHTTPClientTransport(logger: NotificationSyncTests.logger)
            do {
                let token = try AppStoreServerAPIToken(credentials: credentials, issuedAt: Date(), lifetime: .seconds(600))
                func put(_ id: String, _ body: String) async throws -> TransportResponse {
                    try await transport.send(
                        TransportRequest(
                            method: "PUT", url: standIn.baseURL + "/sandbox/inApps/v2/transactions/consumption/" + id,
                            headers: [.init("Authorization", "Bearer \(token.compact)"), .init("Content-Type", "application/json")], body: Array(body.utf8)
                        ),
                        deadline: .now + .seconds(30)
                    )
                }
                // Apple computes a subscription's share: a percentage is refused (4000209).
                let refused = try await put("7600000000000001", Self.valid + #","consumptionPercentage":40000,"refundPreference":"GRANT_PRORATED"}"#)
                #expect(refused.status == 400)
                let error = try #require(try JSONSerialization.jsonObject(with: Data(refused.body)) as? [String: Any])
                #expect(error["errorCode"] as? Int == 4_000_209)
                // GRANT_PRORATED at 100 % (what the hold-out story saw): 400.
                #expect(try await put("7600000000000002", Self.valid + #","consumptionPercentage":100000,"refundPreference":"GRANT_PRORATED"}"#).status == 400)
                #expect(standIn.consumptionRefusals.map(\.refusal) == [.consumptionPercentageAutoRenewableSubscription, .grantProratedWithoutPartialPercentage])
                #expect(standIn.consumptionRequests.isEmpty)
                #expect(try await put("7600000000000001", Self.valid + #","refundPreference":"GRANT_PRORATED"}"#).status == 202)
                #expect(standIn.consumptionRequests.map(\.transactionId) == ["7600000000000001"])
                try await transport.shutdown()
            } catch {
                try? await transport.shutdown()
                throw error
            }
        }
    }
}

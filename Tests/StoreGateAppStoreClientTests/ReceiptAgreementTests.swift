import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

@Suite("offline and remote verdicts agree")
struct ReceiptAgreementTests {
    static let facts = OfflineReceiptFacts(
        bundleId: appBundleId,
        environment: .sandbox,
        purchases: [
            .init(transactionId: "1000000000000001", productId: "com.example.coins", quantity: 2),
            .init(transactionId: "1000000000000002", productId: "com.example.monthly", quantity: 1),
        ]
    )

    @Test("the same receipt decoded twice agrees")
    func agrees() throws {
        let agreement = ReceiptAgreement(offline: Self.facts, reply: sampleReply(environment: .sandbox), answeredBy: .sandbox)
        #expect(agreement.agrees)
        try agreement.requireAgreement()
    }

    @Test("each difference is named", arguments: [
        ("bundle", ReceiptAgreement.Difference.bundleId(offline: "com.other", remote: appBundleId)),
        ("environment", .environment(offline: .production, remote: .sandbox)),
        ("missing remotely", .missingRemotely(transactionId: "5")),
        ("missing offline", .missingOffline(transactionId: "1000000000000002")),
        ("product", .productId(transactionId: "1000000000000001", offline: "com.example.gems", remote: "com.example.coins")),
        ("quantity", .quantity(transactionId: "1000000000000001", offline: 3, remote: 2)),
    ])
    func differences(name: String, expected: ReceiptAgreement.Difference) throws {
        var facts = Self.facts
        switch name {
        case "bundle": facts.bundleId = "com.other"
        case "environment": facts.environment = .production
        case "missing remotely": facts.purchases.append(.init(transactionId: "5", productId: "p", quantity: 1))
        case "missing offline": facts.purchases.removeLast()
        case "product": facts.purchases[0].productId = "com.example.gems"
        case "quantity": facts.purchases[0].quantity = 3
        default: Issue.record("unknown case \(name)")
        }
        let agreement = ReceiptAgreement(offline: facts, reply: sampleReply(environment: .sandbox), answeredBy: .sandbox)
        #expect(agreement.differences == [expected])
        #expect(throws: AppStoreClientError(.offlineDisagreement, reason: "")) { try agreement.requireAgreement() }
    }

    @Test("a receipt verified by a test anchor never agrees with Apple")
    func testAnchor() {
        var facts = Self.facts
        facts.environment = .test
        let agreement = ReceiptAgreement(offline: facts, reply: sampleReply(environment: .sandbox), answeredBy: .sandbox)
        #expect(agreement.differences == [.environment(offline: .test, remote: .sandbox)])
    }

    @Test("a forged reply consistent with the claimed purchase still disagrees with the receipt verified offline")
    func forgedButConsistent() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            // The forger knows the purchase the app claims, but not what the receipt holds.
            var forged = sampleReply(environment: .production)
            forged.receipt?.inApp.removeLast()
            standIn.forge(forged)
            let accepted = try await client.verify(VerifyReceiptRequest(receiptData: "Rk9SR0VE"), expecting: coinsExpectation)
            let agreement = ReceiptAgreement(offline: Self.facts, remote: accepted)
            #expect(agreement.differences == [.environment(offline: .sandbox, remote: .production), .missingRemotely(transactionId: "1000000000000002")])
        }
    }

    @Test("StoreGate's offline verdict on a real receipt agrees with Apple's real reply for it", .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)))
    func realReceipt() async throws {
        let der = try #require(Fixtures.bytes("receipts/revenuecat-ios-sandbox-2020-sha1-9iap.der"))
        let verified = try await ReceiptVerifier().verify(der, expecting: ReceiptExpectations(bundleId: "com.revenuecat.sampleapp"))
        let reply = try VerifyReceiptResponse.decode(try #require(Fixtures.bytes("verifyreceipt/revenuecat-verifyreceipt-sandbox-2020.json")))
        let purchase = try #require(verified.proof.transactions.first)
        let accepted = try VerifyReceiptReplyVerifier.check(reply, answeredBy: .sandbox, expecting: VerifyReceiptExpectation(
            bundleId: "com.revenuecat.sampleapp",
            purchase: .init(transactionId: purchase.transactionId, productId: purchase.productId, quantity: purchase.quantity)
        ))
        let facts = OfflineReceiptFacts(proof: verified.proof)
        #expect(facts.purchases.count == 9)
        let agreement = ReceiptAgreement(offline: facts, remote: accepted)
        #expect(agreement.agrees, "\(agreement.differences)")
    }

    @Test("a real reply for another receipt disagrees with the offline verdict", .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)))
    func realMismatch() async throws {
        let der = try #require(Fixtures.bytes("receipts/revenuecat-ios-sandbox-2020-sha1-9iap.der"))
        let verified = try await ReceiptVerifier().verify(der, expecting: ReceiptExpectations(bundleId: "com.revenuecat.sampleapp"))
        let other = try VerifyReceiptResponse.decode(try #require(Fixtures.bytes("verifyreceipt/swiftyreceiptvalidator-verifyreceipt-sandbox-valid-subscription.json")))
        let agreement = ReceiptAgreement(offline: OfflineReceiptFacts(proof: verified.proof), reply: other, answeredBy: .sandbox)
        #expect(!agreement.agrees)
        #expect(agreement.differences.contains(.bundleId(offline: "com.revenuecat.sampleapp", remote: "com.dominikringler.greeny")))
        #expect(agreement.differences.contains(.missingOffline(transactionId: "1000000528099649")))
    }
}

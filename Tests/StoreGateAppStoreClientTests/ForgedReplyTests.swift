import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

/// The 2012 "in-appstore" attack: a server that answers status 0 for anything. Every reply
/// it can make that does not describe the purchase being verified must be refused, each with
/// its own error.
@Suite("forged verifyReceipt replies")
struct ForgedReplyTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let reply: VerifyReceiptResponse
        let expected: AppStoreClientError.Code
        var testDescription: String { name }
    }

    static var cases: [Case] {
        var otherApp = sampleReply(environment: .production, bundleId: "com.attacker.app")
        otherApp.environment = .production

        var noBundle = sampleReply(environment: .production)
        noBundle.receipt?.bundleId = nil

        var otherTransaction = sampleReply(environment: .production)
        otherTransaction.receipt?.inApp[0].transactionId = "9999999999999999"

        var otherProduct = sampleReply(environment: .production)
        otherProduct.receipt?.inApp[0].productId = "com.example.gems"

        var otherQuantity = sampleReply(environment: .production)
        otherQuantity.receipt?.inApp[0].quantity = 20

        var noQuantity = sampleReply(environment: .production)
        noQuantity.receipt?.inApp[0].quantity = nil

        var conflictingEntries = sampleReply(environment: .production)
        conflictingEntries.latestReceiptInfo.append(VerifyReceiptTransaction(quantity: 2, productId: "com.example.gems", transactionId: "1000000000000001"))

        var claimsSandbox = sampleReply(environment: .production)
        claimsSandbox.environment = .sandbox

        var claimsXcode = sampleReply(environment: .production)
        claimsXcode.environment = .xcode

        return [
            Case(name: "status 0 and nothing else", reply: VerifyReceiptResponse(status: .valid), expected: .missingReceipt),
            Case(name: "status 0 for another app", reply: otherApp, expected: .bundleIdMismatch),
            Case(name: "status 0 naming no app", reply: noBundle, expected: .bundleIdMismatch),
            Case(name: "status 0 without the transaction", reply: otherTransaction, expected: .transactionNotFound),
            Case(name: "status 0 with the transaction for another product", reply: otherProduct, expected: .productIdMismatch),
            Case(name: "status 0 with the transaction in another quantity", reply: otherQuantity, expected: .quantityMismatch),
            Case(name: "status 0 with the transaction without a quantity", reply: noQuantity, expected: .quantityMismatch),
            Case(name: "status 0 whose second entry for the transaction disagrees", reply: conflictingEntries, expected: .productIdMismatch),
            Case(name: "a production endpoint answering a sandbox reply", reply: claimsSandbox, expected: .environmentMismatch),
            Case(name: "a production endpoint answering an Xcode reply", reply: claimsXcode, expected: .environmentMismatch),
            Case(name: "status 21003 with a perfect receipt", reply: { var r = sampleReply(environment: .production); r.status = .notAuthenticated; return r }(), expected: .replyStatus),
        ]
    }

    @Test("a forged reply is refused with the error of what it gets wrong", arguments: cases)
    func forged(_ forged: Case) async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.forge(forged.reply)
            let error = await appStoreError {
                try await client.verify(VerifyReceiptRequest(receiptData: "Rk9SR0VE"), expecting: coinsExpectation)
            }
            #expect(error?.code == forged.expected)
            #expect(error?.isRetryable == false)
        }
    }

    @Test("a genuine-looking reply from an environment the caller refuses is refused")
    func environmentNotAllowed() async throws {
        try await withVerifyReceiptStandIn { standIn, client in
            standIn.registerReceipt("U0FOREJPWA==", environment: .sandbox, reply: sampleReply(environment: .sandbox))
            let productionOnly = VerifyReceiptExpectation(bundleId: appBundleId, purchase: coinsPurchase, environments: [.production])
            let error = await appStoreError {
                try await client.verify(VerifyReceiptRequest(receiptData: "U0FOREJPWA=="), expecting: productionOnly)
            }
            #expect(error?.code == .environmentNotAllowed)
        }
    }

    @Test("the expected purchase may sit in latest_receipt_info")
    func latestReceiptInfo() throws {
        let purchase = VerifyReceiptExpectation.Purchase(transactionId: "1000000000000003", productId: "com.example.monthly")
        let accepted = try VerifyReceiptReplyVerifier.check(sampleReply(environment: .sandbox), answeredBy: .sandbox, expecting: VerifyReceiptExpectation(bundleId: appBundleId, purchase: purchase))
        #expect(accepted.matchedTransactions.map(\.transactionId) == ["1000000000000003"])
    }

    @Test("21006 is accepted and reported as an expired subscription")
    func expiredSubscription() throws {
        var reply = sampleReply(environment: .production)
        reply.status = .subscriptionExpired
        let accepted = try VerifyReceiptReplyVerifier.check(reply, answeredBy: .production, expecting: coinsExpectation)
        #expect(accepted.outcome == .subscriptionExpired)
    }

    @Test("a refunded purchase is accepted with its revocation date")
    func refunded() throws {
        var reply = sampleReply(environment: .production)
        reply.receipt?.inApp[0].cancellationDate = Date(timeIntervalSince1970: 1_650_000_000)
        let accepted = try VerifyReceiptReplyVerifier.check(reply, answeredBy: .production, expecting: coinsExpectation)
        #expect(accepted.revocationDate == Date(timeIntervalSince1970: 1_650_000_000))
    }

    @Test("a reply without an environment takes the endpoint's")
    func environmentFromEndpoint() throws {
        var reply = sampleReply(environment: .production)
        reply.environment = nil
        let accepted = try VerifyReceiptReplyVerifier.check(reply, answeredBy: .production, expecting: coinsExpectation)
        #expect(accepted.environment == .production)
    }

    @Test("a whole-receipt expectation checks app and environment but names no purchase")
    func wholeReceipt() throws {
        let accepted = try VerifyReceiptReplyVerifier.check(sampleReply(environment: .sandbox), answeredBy: .sandbox, expecting: .wholeReceipt(bundleId: appBundleId))
        #expect(accepted.matchedTransactions.count == 2)
        #expect(throws: AppStoreClientError(.bundleIdMismatch, reason: "")) {
            try VerifyReceiptReplyVerifier.check(sampleReply(environment: .sandbox), answeredBy: .sandbox, expecting: .wholeReceipt(bundleId: "com.other"))
        }
    }
}

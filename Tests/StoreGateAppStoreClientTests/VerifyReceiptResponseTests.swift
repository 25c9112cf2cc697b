import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

@Suite("verifyReceipt reply model")
struct VerifyReceiptResponseTests {
    static let fixtureNames = [
        "revenuecat-verifyreceipt-sandbox-2020.json",
        "swiftyreceiptvalidator-verifyreceipt-sandbox-subscription-expired.json",
        "swiftyreceiptvalidator-verifyreceipt-sandbox-valid-subscription.json",
        "swiftyreceiptvalidator-verifyreceipt-status-21007.json",
        "appstoreiap-verifyreceipt-2020.json",
        "storereceiptvalidator-verifyreceipt-sandbox-handedited.json",
        "storereceiptvalidator-verifyreceipt-status-21002.json",
    ]

    @Test("every real verifyReceipt reply decodes", .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)), arguments: fixtureNames)
    func fixturesDecode(name: String) throws {
        let bytes = try #require(Fixtures.bytes("verifyreceipt/" + name))
        let reply = try VerifyReceiptResponse.decode(bytes)
        let raw = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(reply.status.rawValue == raw["status"] as? Int)
        let rawInApp = (raw["receipt"] as? [String: Any])?["in_app"] as? [Any] ?? []
        #expect(reply.receipt?.inApp.count == (raw["receipt"] == nil ? nil : rawInApp.count))
        #expect(reply.latestReceiptInfo.count == (raw["latest_receipt_info"] as? [Any])?.count ?? 0)
        #expect(reply.pendingRenewalInfo.count == (raw["pending_renewal_info"] as? [Any])?.count ?? 0)
    }

    @Test("RevenueCat's sandbox reply reads with Apple's values", .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)))
    func revenueCat() throws {
        let reply = try VerifyReceiptResponse.decode(try #require(Fixtures.bytes("verifyreceipt/revenuecat-verifyreceipt-sandbox-2020.json")))
        #expect(reply.status == .valid)
        #expect(reply.environment == .sandbox)
        let receipt = try #require(reply.receipt)
        #expect(receipt.bundleId == "com.revenuecat.sampleapp")
        #expect(receipt.receiptType == "ProductionSandbox")
        #expect(receipt.applicationVersion == "4")
        #expect(receipt.receiptCreationDate == Date(timeIntervalSince1970: 1_595_439_548))
        let first = try #require(receipt.inApp.first)
        #expect(first.transactionId == "1000000692879214")
        #expect(first.originalTransactionId == "1000000692878476")
        #expect(first.productId == "com.revenuecat.monthly_4.99.1_week_intro")
        #expect(first.quantity == 1)
        #expect(first.purchaseDate == Date(timeIntervalSince1970: 1_594_755_400))
        #expect(first.expiresDate == Date(timeIntervalSince1970: 1_594_755_700))
        #expect(first.isTrialPeriod == false)
        #expect(reply.latestReceiptInfo.first?.isTrialPeriod == true)
        #expect(reply.pendingRenewalInfo.first?.autoRenewStatus == true)
    }

    @Test("ids, quantities and millisecond dates written as numbers read like strings", .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)))
    func numbersForStrings() throws {
        let reply = try VerifyReceiptResponse.decode(try #require(Fixtures.bytes("verifyreceipt/storereceiptvalidator-verifyreceipt-sandbox-handedited.json")))
        let first = try #require(reply.receipt?.inApp.first)
        #expect(first.transactionId == "1000000156455961")
        #expect(first.quantity == 1)
        #expect(first.purchaseDate == Date(timeIntervalSince1970: 1_432_429_618))
        #expect(first.isTrialPeriod == false)
        #expect(reply.receipt?.applicationVersion == "1")
        #expect(reply.receipt?.appItemId == "11202513425662")
        #expect(reply.latestReceiptInfo.first?.webOrderLineItemId == "1000000027948608")
    }

    @Test("unknown keys are ignored")
    func unknownKeys() throws {
        let reply = try VerifyReceiptResponse.decode(Array(#"{"status":0,"environment":"Production","brand_new":{"x":[1,2]},"receipt":{"bundle_id":"a.b","shiny":true,"in_app":[{"transaction_id":"1","quantity":"1","product_id":"p","what":null}]}}"#.utf8))
        #expect(reply.receipt?.bundleId == "a.b")
        #expect(reply.receipt?.inApp.first?.transactionId == "1")
    }

    @Test("an iOS 6-style receipt's top-level purchase is read as a transaction")
    func legacyReceipt() throws {
        let reply = try VerifyReceiptResponse.decode(Array(#"{"status":21006,"receipt":{"bid":"com.example.old","bvrs":"3","transaction_id":"77","original_transaction_id":"70","product_id":"old.monthly","quantity":"1","purchase_date_ms":"1350000000000","expires_date":"1352592000000"}}"#.utf8))
        let receipt = try #require(reply.receipt)
        #expect(receipt.bundleId == "com.example.old")
        #expect(receipt.applicationVersion == "3")
        let legacy = try #require(receipt.legacyTransaction)
        #expect(legacy.transactionId == "77")
        #expect(legacy.expiresDate == Date(timeIntervalSince1970: 1_352_592_000))
        #expect(receipt.transactions.count == 1)
    }

    @Test("a reply that is not the documented JSON is a malformed reply naming the field", arguments: [
        #"not json"#,
        #"[]"#,
        #"{"environment":"Production"}"#,
        #"{"status":"zero"}"#,
        #"{"status":0,"receipt":{"in_app":[{"quantity":{"n":1}}]}}"#,
        #"{"status":0,"receipt":{"in_app":[{"is_trial_period":"maybe"}]}}"#,
        #"{"status":0,"receipt":{"in_app":[{"purchase_date_ms":"yesterday"}]}}"#,
        #"{"status":0,"receipt":"MIIT..."}"#,
    ])
    func malformed(body: String) {
        #expect(throws: AppStoreClientError(.malformedReply, reason: "")) {
            try VerifyReceiptResponse.decode(Array(body.utf8))
        }
    }

    @Test("a reply written back in Apple's spelling reads the same")
    func roundTrip() throws {
        let reply = sampleReply()
        let again = try VerifyReceiptResponse.decode(reply.jsonBytes())
        #expect(again == reply)
        let text = String(decoding: reply.jsonBytes(), as: UTF8.self)
        #expect(text.contains(#""purchase_date_ms":"1600000000000""#))
        #expect(text.contains(#""quantity":"2""#))
    }

    @Test("the request body carries receipt-data, password and exclude-old-transactions")
    func requestBody() throws {
        let request = VerifyReceiptRequest(receipt: [0x30, 0x82, 0x01], sharedSecret: SharedSecret("s3cr\"et"), excludeOldTransactions: true)
        #expect(request.receiptData == "MIIB")
        #expect("\(request.sharedSecret!)" == "<redacted shared secret>")
    }
}

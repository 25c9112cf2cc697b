import Foundation
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

@Suite("Decoding agrees with Apple's verifyReceipt", .enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage)))
struct AppleReplyAgreementTests {
    static func appleReply() throws -> [String: Any] {
        let bytes = try #require(Fixtures.bytes("verifyreceipt/revenuecat-verifyreceipt-sandbox-2020.json"))
        return try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
    }

    static func ours() throws -> [String: Any] {
        let bytes = try #require(Fixtures.bytes("receipts/revenuecat-ios-sandbox-2020-sha1-9iap.der"))
        let receipt = try UnverifiedReceipt(der: bytes).receipt
        let data = try JSONEncoder().encode(VerifyReceiptReceipt(receipt))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    @Test("every in-app entry equals Apple's, field by field")
    func inAppEntries() throws {
        let apple = try #require(try Self.appleReply()["receipt"] as? [String: Any])
        let appleEntries = try #require(apple["in_app"] as? [[String: Any]])
        let ourEntries = try #require(try Self.ours()["in_app"] as? [[String: Any]])
        #expect(appleEntries.count == 9)
        #expect(ourEntries.count == appleEntries.count)
        for appleEntry in appleEntries {
            let transactionId = try #require(appleEntry["transaction_id"] as? String)
            let ours = try #require(ourEntries.first { $0["transaction_id"] as? String == transactionId }, "transaction \(transactionId) missing")
            for (key, value) in appleEntry {
                #expect(ours[key] as? String == value as? String, "\(transactionId).\(key): ours \(String(describing: ours[key])), Apple's \(value)")
            }
        }
    }

    @Test("the receipt-level fields equal Apple's")
    func receiptFields() throws {
        let apple = try #require(try Self.appleReply()["receipt"] as? [String: Any])
        let ours = try Self.ours()
        for key in ["receipt_type", "bundle_id", "application_version", "original_application_version",
                    "receipt_creation_date", "receipt_creation_date_ms", "receipt_creation_date_pst",
                    "original_purchase_date", "original_purchase_date_ms", "original_purchase_date_pst"] {
            #expect(ours[key] as? String == apple[key] as? String, "\(key)")
        }
        for key in ["adam_id", "app_item_id", "download_id", "version_external_identifier"] {
            #expect((ours[key] as? NSNumber)?.int64Value == (apple[key] as? NSNumber)?.int64Value, "\(key)")
        }
    }
}

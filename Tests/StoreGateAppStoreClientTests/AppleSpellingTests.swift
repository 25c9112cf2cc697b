import Foundation
import StoreGateAppStoreClient
import StoreGateCore
import StoreGateReceipt
import StoreGateTestSupport
import Testing

/// The one verifyReceipt shape: Apple's reply decodes into ``VerifyReceiptResponse``, and the
/// one writer writes it back in Apple's spelling, member names and order.
@Suite("verifyReceipt replies written back in Apple's spelling")
struct AppleSpellingTests {
    static let withFixtures = ConditionTrait.enabled(if: Fixtures.directory != nil, Comment(rawValue: Fixtures.missingMessage))

    /// A JSON object read by Core's strict reader, which keeps members in document order.
    static func object(_ bytes: [UInt8]) throws -> JSONObject {
        try JSONReader.readObject(bytes).get()
    }

    @Test("a real reply decoded, written and decoded again is the same, and writes the same bytes",
          withFixtures, arguments: VerifyReceiptResponseTests.fixtureNames)
    func realRoundTrip(name: String) throws {
        let reply = try VerifyReceiptResponse.decode(try #require(Fixtures.bytes("verifyreceipt/" + name)))
        let written = reply.jsonBytes()
        let again = try VerifyReceiptResponse.decode(written)
        #expect(again == reply)
        #expect(again.jsonBytes() == written)
    }

    /// Apple's receipt and purchase objects, as Apple wrote them, and as StoreGate writes the
    /// decoded reply back: the same members, values and order (these replies hold only
    /// members StoreGate models).
    @Test("the receipt and each purchase are written back as Apple wrote them, member for member and in order",
          withFixtures, arguments: ["revenuecat-verifyreceipt-sandbox-2020.json", "appstoreiap-verifyreceipt-2020.json"])
    func sameAsApple(name: String) throws {
        let bytes = try #require(Fixtures.bytes("verifyreceipt/" + name))
        let apple = try Self.object(bytes)
        let ours = try Self.object(try VerifyReceiptResponse.decode(bytes).jsonBytes())
        #expect(ours["receipt"] == apple["receipt"])
        #expect(ours["latest_receipt_info"] == apple["latest_receipt_info"])
        #expect(ours["status"] == apple["status"])
        #expect(ours["environment"] == apple["environment"])
        #expect(ours["latest_receipt"] == apple["latest_receipt"])
    }

    @Test("ids Apple writes as numbers stay numbers; any other spelling is kept as the string it was")
    func numbers() throws {
        let body = #"{"status":0,"receipt":{"adam_id":"007","app_item_id":"12","download_id":-3,"version_external_identifier":"18446744073709551615","in_app":[]}}"#
        let reply = try VerifyReceiptResponse.decode(Array(body.utf8))
        let receipt = try Self.object(reply.jsonBytes())["receipt"]
        guard case .object(let object) = try #require(receipt) else { throw Failure("receipt is not an object") }
        #expect(object["adam_id"] == .string("007"))
        #expect(object["app_item_id"] == .integer(12))
        #expect(object["download_id"] == .integer(-3))
        #expect(object["version_external_identifier"] == .string("18446744073709551615"))
        #expect(try VerifyReceiptResponse.decode(reply.jsonBytes()) == reply)
    }

    @Test("JSONEncoder encodes the same members as the writer writes")
    func encodableIsTheWriter() throws {
        let reply = sampleReply()
        let encoded = try JSONEncoder().encode(reply)
        let viaEncoder = try #require(try JSONSerialization.jsonObject(with: encoded) as? NSDictionary)
        let viaWriter = try #require(try JSONSerialization.jsonObject(with: Data(reply.jsonBytes())) as? NSDictionary)
        #expect(viaEncoder == viaWriter)
        #expect(try JSONDecoder().decode(VerifyReceiptResponse.self, from: encoded) == reply)
    }

    @Test("each date is written three times, from one millisecond, in Apple's spellings")
    func threeSpellings() throws {
        let body = #"{"status":0,"latest_receipt_info":[{"purchase_date_ms":"1699949999999.5","expires_date_ms":1595439548000}]}"#
        let text = String(decoding: try VerifyReceiptResponse.decode(Array(body.utf8)).jsonBytes(), as: UTF8.self)
        #expect(text.contains(#""purchase_date":"2023-11-14 08:20:00 Etc/GMT","purchase_date_ms":"1699950000000","purchase_date_pst":"2023-11-14 00:20:00 America/Los_Angeles""#))
        #expect(text.contains(#""expires_date":"2020-07-22 17:39:08 Etc/GMT","expires_date_ms":"1595439548000","expires_date_pst":"2020-07-22 10:39:08 America/Los_Angeles""#))
    }

    @Test("a receipt decoded offline and the same receipt in a reply are written alike")
    func offlineAndReplyAlike() throws {
        let date = Date(timeIntervalSince1970: 1_600_000_000)
        let receipt = AppReceipt(
            receiptType: "ProductionSandbox", bundleId: appBundleId, bundleIdData: [], appVersion: "42",
            opaqueValue: [], sha1Hash: [], creationDate: date,
            inAppPurchases: [InAppPurchase(quantity: 2, productId: "com.example.coins", transactionId: "1000000000000001", purchaseDate: date)],
            appItemId: 0, downloadId: 0)
        let offline = VerifyReceiptResponse(status: .valid, environment: .sandbox, receipt: VerifyReceiptReceipt(receipt, requestDate: date))
        let written = offline.jsonBytes()
        let again = try VerifyReceiptResponse.decode(written)
        #expect(again == offline)
        #expect(again.jsonBytes() == written)
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.contains(#""adam_id":0,"app_item_id":0,"bundle_id":"com.example.storegate""#))
        #expect(text.contains(#""is_trial_period":"false""#))
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

import Foundation
import StoreGateCore
import StoreGateSignedData
import Testing

/// Issue 33, item 6: API 1.21's billing plan and commitment members are decoded, and every
/// payload keeps the members StoreGate does not model, writing them back as they came.
@Suite("forward-compatible payload models")
struct ForwardCompatibleModelTests {
    /// Whether two JSON texts hold the same document: the same members (in any order) with
    /// the same values, numbers compared by value.
    static func sameDocument(_ lhs: [UInt8], _ rhs: [UInt8]) throws -> Bool {
        same(.object(try JSONReader.readObject(lhs).get()), .object(try JSONReader.readObject(rhs).get()))
    }

    static func same(_ lhs: JSONValue, _ rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.object(let a), .object(let b)):
            guard a.members.count == b.members.count else { return false }
            return a.members.allSatisfy { member in b[member.key].map { same(member.value, $0) } ?? false }
        case (.array(let a), .array(let b)):
            return a.count == b.count && zip(a, b).allSatisfy { same($0, $1) }
        case (.integer(let a), .fraction(let b)), (.fraction(let b), .integer(let a)):
            return Double(a) == b
        default:
            return lhs == rhs
        }
    }

    static func written(_ value: some Encodable) throws -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return Array(try encoder.encode(value))
    }

    /// Members Apple may add one day, of every JSON type, nested too.
    static let future = #""someFutureString":"x/y","someFutureInteger":9007199254740993,"someFutureFraction":2.5,"someFutureBool":false,"someFutureNull":null,"someFutureArray":[1,"two",{"three":[3.25]}],"someFutureObject":{"b":1,"a":{"c":[]}}"#

    @Test("a transaction's billingPlanType and commitmentInfo are read, and written back")
    func transactionCommitment() throws {
        let json = #"{"transactionId":"2","billingPlanType":"MONTHLY","commitmentInfo":{"billingPeriodNumber":3,"commitmentExpiresDate":1767225600000,"commitmentPrice":119880,"totalBillingPeriods":12}}"#
        let p = try JWSTransactionDecodedPayload(json: Array(json.utf8))
        #expect(p.billingPlanType == .monthly)
        let commitment = try #require(p.commitmentInfo)
        #expect(commitment.billingPeriodNumber == 3)
        #expect(commitment.totalBillingPeriods == 12)
        #expect(commitment.commitmentPrice == 119_880)
        #expect(commitment.commitmentExpiresDate == Date(timeIntervalSince1970: 1_767_225_600))
        #expect(p.unknownMembers.members.isEmpty)
        #expect(try Self.sameDocument(Self.written(p), Array(json.utf8)))
    }

    @Test("a renewal info's renewalBillingPlanType and commitmentInfo are read, and written back")
    func renewalCommitment() throws {
        let json = #"{"originalTransactionId":"1","renewalBillingPlanType":"BILLED_UPFRONT","commitmentInfo":{"commitmentAutoRenewProductId":"com.example.annual.monthly","commitmentAutoRenewStatus":1,"commitmentRenewalBillingPlanType":"MONTHLY","commitmentRenewalDate":1798761600000,"commitmentRenewalPrice":9990}}"#
        let p = try JWSRenewalInfoDecodedPayload(json: Array(json.utf8))
        #expect(p.renewalBillingPlanType == .billedUpfront)
        let commitment = try #require(p.commitmentInfo)
        #expect(commitment.commitmentAutoRenewProductId == "com.example.annual.monthly")
        #expect(commitment.commitmentAutoRenewStatus == .on)
        #expect(commitment.commitmentRenewalBillingPlanType == .monthly)
        #expect(commitment.commitmentRenewalDate == Date(timeIntervalSince1970: 1_798_761_600))
        #expect(commitment.commitmentRenewalPrice == 9990)
        #expect(try Self.sameDocument(Self.written(p), Array(json.utf8)))
    }

    @Test("an unknown billing plan is kept as it came; a commitment of the wrong type is refused by member name")
    func billingEdges() throws {
        let p = try JWSTransactionDecodedPayload(json: Array(#"{"billingPlanType":"QUARTERLY"}"#.utf8))
        #expect(p.billingPlanType?.rawValue == "QUARTERLY")
        let error = try #require(throws: SignedDataError.self) {
            try JWSTransactionDecodedPayload(json: Array(#"{"commitmentInfo":{"billingPeriodNumber":"3"}}"#.utf8))
        }
        #expect(error.code == .invalidField)
        #expect(error.field == "commitmentInfo.billingPeriodNumber")
        let wrongShape = try #require(throws: SignedDataError.self) {
            try JWSRenewalInfoDecodedPayload(json: Array(#"{"commitmentInfo":[1]}"#.utf8))
        }
        #expect(wrongShape.field == "commitmentInfo")
    }

    @Test("every kind keeps unknown members, at the top and nested, and writes the document back unchanged", arguments: [
        "transaction", "renewal", "app-transaction", "notification", "summary", "external-purchase-token", "app-data",
    ])
    func unknownMembersRoundTrip(_ kind: String) throws {
        let future = Self.future
        let json: String
        let written: [UInt8]
        switch kind {
        case "transaction":
            json = #"{"transactionId":"2","price":4990,"commitmentInfo":{"totalBillingPeriods":12,"futureCommitment":"z"},"advancedCommerceInfo":{"taxCode":"C003-00-1","items":[{"SKU":"a"}]},\#(future)}"#
            let p = try JWSTransactionDecodedPayload(json: Array(json.utf8))
            #expect(p.unknownMembers["advancedCommerceInfo"] != nil)
            #expect(p.unknownMembers["someFutureInteger"] == .integer(9_007_199_254_740_993))
            #expect(p.commitmentInfo?.unknownMembers["futureCommitment"] == .string("z"))
            written = try Self.written(p)
        case "renewal":
            json = #"{"originalTransactionId":"1","commitmentInfo":{"futureCommitment":[1]},\#(future)}"#
            written = try Self.written(try JWSRenewalInfoDecodedPayload(json: Array(json.utf8)))
        case "app-transaction":
            json = #"{"bundleId":"b","receiptType":"Sandbox",\#(future)}"#
            written = try Self.written(try AppTransaction(json: Array(json.utf8)))
        case "notification":
            json = #"{"notificationType":"DID_RENEW","data":{"bundleId":"b","environment":"Sandbox",\#(future)},\#(future)}"#
            let p = try ResponseBodyV2DecodedPayload(json: Array(json.utf8))
            #expect(p.data?.unknownMembers.members.count == 7)
            written = try Self.written(p)
        case "summary":
            json = #"{"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY","summary":{"bundleId":"b","succeededCount":3,\#(future)}}"#
            written = try Self.written(try ResponseBodyV2DecodedPayload(json: Array(json.utf8)))
        case "external-purchase-token":
            json = #"{"notificationType":"EXTERNAL_PURCHASE_TOKEN","externalPurchaseToken":{"externalPurchaseId":"x","bundleId":"b",\#(future)}}"#
            written = try Self.written(try ResponseBodyV2DecodedPayload(json: Array(json.utf8)))
        default:
            json = #"{"notificationType":"RESCIND_CONSENT","appData":{"bundleId":"b","environment":"Sandbox",\#(future)}}"#
            written = try Self.written(try ResponseBodyV2DecodedPayload(json: Array(json.utf8)))
        }
        #expect(try Self.sameDocument(written, Array(json.utf8)), "\(String(decoding: written, as: UTF8.self))")
    }

    @Test("unknown members keep Apple's order and take part in equality")
    func orderAndEquality() throws {
        let a = try JWSTransactionDecodedPayload(json: Array(#"{"transactionId":"1","zeta":1,"alpha":2}"#.utf8))
        #expect(a.unknownMembers.members.map(\.key) == ["zeta", "alpha"])
        let b = try JWSTransactionDecodedPayload(json: Array(#"{"transactionId":"1","zeta":1,"alpha":3}"#.utf8))
        #expect(a != b)
        let c = try JWSTransactionDecodedPayload(json: Array(#"{"transactionId":"1"}"#.utf8))
        #expect(c.unknownMembers.members.isEmpty)
    }
}

import Foundation
import StoreGateCore
import StoreGateSignedData
import StoreGateTestSupport
import Testing

@Suite("Apple's payload models")
struct ModelTests {
    @Test("unknown enumeration values are kept as raw values")
    func unknownValuesKept() throws {
        let json = #"{"type":"Super-Consumable","inAppOwnershipType":"BORROWED","offerType":9,"revocationReason":7,"transactionReason":"GIFT","offerDiscountType":"SPECIAL","revocationType":"REFUND_SOMEHOW","environment":"Staging"}"#
        let payload = try JWSTransactionDecodedPayload(json: Array(json.utf8))
        #expect(payload.type?.rawValue == "Super-Consumable")
        #expect(payload.inAppOwnershipType?.rawValue == "BORROWED")
        #expect(payload.offerType?.rawValue == 9)
        #expect(payload.revocationReason?.rawValue == 7)
        #expect(payload.transactionReason?.rawValue == "GIFT")
        #expect(payload.offerDiscountType?.rawValue == "SPECIAL")
        #expect(payload.revocationType?.rawValue == "REFUND_SOMEHOW")
        #expect(payload.environment?.rawValue == "Staging")
    }

    @Test("every documented transaction member is read")
    func everyTransactionMember() throws {
        let json = """
            {"originalTransactionId":"1","transactionId":"2","webOrderLineItemId":"3","bundleId":"b","productId":"p",
            "subscriptionGroupIdentifier":"g","purchaseDate":1000,"originalPurchaseDate":2000,"expiresDate":3000,"quantity":4,
            "type":"Consumable","appAccountToken":"207262DA-1AC8-4E0A-A399-5AA62A82800F","inAppOwnershipType":"FAMILY_SHARED",
            "signedDate":4000,"revocationReason":1,"revocationDate":5000,"isUpgraded":true,"offerType":4,"offerIdentifier":"o",
            "environment":"Production","storefront":"FRA","storefrontId":"143442","transactionReason":"RENEWAL","price":1990,
            "currency":"EUR","offerDiscountType":"PAY_UP_FRONT","appTransactionId":"a","offerPeriod":"P1M",
            "revocationType":"REFUND_PRORATED","revocationPercentage":50000,"someFutureField":{"x":[1]}}
            """
        let p = try JWSTransactionDecodedPayload(json: Array(json.utf8))
        #expect(p.originalTransactionId == "1" && p.transactionId == "2" && p.webOrderLineItemId == "3")
        #expect(p.bundleId == "b" && p.productId == "p" && p.subscriptionGroupIdentifier == "g")
        #expect(p.purchaseDate == Date(timeIntervalSince1970: 1) && p.originalPurchaseDate == Date(timeIntervalSince1970: 2))
        #expect(p.expiresDate == Date(timeIntervalSince1970: 3) && p.signedDate == Date(timeIntervalSince1970: 4))
        #expect(p.revocationDate == Date(timeIntervalSince1970: 5))
        #expect(p.quantity == 4 && p.type == .consumable && p.inAppOwnershipType == .familyShared)
        #expect(p.appAccountToken == UUID(uuidString: "207262da-1ac8-4e0a-a399-5aa62a82800f"))
        #expect(p.revocationReason == .refundedDueToIssue && p.isUpgraded == true && p.offerType == .winBackOffer)
        #expect(p.offerIdentifier == "o" && p.environment == .production && p.storefront == "FRA" && p.storefrontId == "143442")
        #expect(p.transactionReason == .renewal && p.price == 1990 && p.currency == "EUR" && p.offerDiscountType == .payUpFront)
        #expect(p.appTransactionId == "a" && p.offerPeriod == "P1M" && p.revocationType == .refundProrated && p.revocationPercentage == 50000)
    }

    @Test("every documented renewal info member is read")
    func everyRenewalMember() throws {
        let json = """
            {"expirationIntent":2,"originalTransactionId":"1","autoRenewProductId":"a","productId":"p","autoRenewStatus":0,
            "isInBillingRetryPeriod":true,"priceIncreaseStatus":1,"gracePeriodExpiresDate":1000,"offerType":2,"offerIdentifier":"o",
            "signedDate":2000,"environment":"Sandbox","recentSubscriptionStartDate":3000,"renewalDate":4000,"currency":"USD",
            "renewalPrice":990,"offerDiscountType":"FREE_TRIAL","eligibleWinBackOfferIds":["w1","w2"],
            "appAccountToken":"207262da-1ac8-4e0a-a399-5aa62a82800f","appTransactionId":"t","offerPeriod":"P1W"}
            """
        let p = try JWSRenewalInfoDecodedPayload(json: Array(json.utf8))
        #expect(p.expirationIntent == .billingError && p.originalTransactionId == "1" && p.autoRenewProductId == "a")
        #expect(p.productId == "p" && p.autoRenewStatus == .off && p.isInBillingRetryPeriod == true)
        #expect(p.priceIncreaseStatus == .customerConsentedOrWasNotifiedWithoutNeedingConsent)
        #expect(p.gracePeriodExpiresDate == Date(timeIntervalSince1970: 1) && p.offerType == .promotionalOffer)
        #expect(p.offerIdentifier == "o" && p.signedDate == Date(timeIntervalSince1970: 2) && p.environment == .sandbox)
        #expect(p.recentSubscriptionStartDate == Date(timeIntervalSince1970: 3) && p.renewalDate == Date(timeIntervalSince1970: 4))
        #expect(p.currency == "USD" && p.renewalPrice == 990 && p.offerDiscountType == .freeTrial)
        #expect(p.eligibleWinBackOfferIds == ["w1", "w2"] && p.appTransactionId == "t" && p.offerPeriod == "P1W")
        #expect(p.appAccountToken != nil)
    }

    @Test("notification data with status and consumption reason")
    func notificationData() throws {
        let json = #"{"notificationType":"CONSUMPTION_REQUEST","notificationUUID":"u","version":"2.0","signedDate":1,"data":{"appAppleId":9,"bundleId":"b","bundleVersion":"1","environment":"Production","status":1,"consumptionRequestReason":"LEGAL"}}"#
        let p = try ResponseBodyV2DecodedPayload(json: Array(json.utf8))
        #expect(p.notificationType == .consumptionRequest)
        #expect(p.data?.status == .active)
        #expect(p.data?.consumptionRequestReason == .legal)
        #expect(p.subject.appAppleId == 9)
        #expect(p.subject.environment == .production)
    }

    @Test("wrong member types are refused with the member's path", arguments: [
        (#"{"quantity":1.5}"#, "quantity"), (#"{"price":"1"}"#, "price"), (#"{"isUpgraded":1}"#, "isUpgraded"),
        (#"{"purchaseDate":"2023-01-01"}"#, "purchaseDate"), (#"{"appAccountToken":"not-a-uuid"}"#, "appAccountToken"),
        (#"{"offerType":"1"}"#, "offerType"), (#"{"type":1}"#, "type"), (#"{"environment":null,"bundleId":[]}"#, "bundleId"),
    ])
    func wrongTypes(_ json: String, _ field: String) {
        let error = #expect(throws: SignedDataError.self) { _ = try JWSTransactionDecodedPayload(json: Array(json.utf8)) }
        #expect(error?.code == .invalidField)
        #expect(error?.field == field)
    }

    @Test("nested wrong types name their path")
    func nestedPath() {
        let error = #expect(throws: SignedDataError.self) {
            _ = try ResponseBodyV2DecodedPayload(json: Array(#"{"data":{"appAppleId":"x"}}"#.utf8))
        }
        #expect(error?.field == "data.appAppleId")
    }

    @Test("models write Apple's JSON back, dates as milliseconds")
    func encodesAppleJSON() throws {
        let json = #"{"transactionId":"2","purchaseDate":1697679936049.7297,"signedDate":1687941512573,"quantity":1,"type":"Consumable","appAccountToken":"207262DA-1AC8-4E0A-A399-5AA62A82800F"}"#
        let payload = try JWSTransactionDecodedPayload(json: Array(json.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let object = try #require(try JSONSerialization.jsonObject(with: encoder.encode(payload)) as? [String: Any])
        #expect(object["signedDate"] as? Double == 1_687_941_512_573)
        #expect(abs((object["purchaseDate"] as? Double ?? 0) - 1_697_679_936_049.7297) < 0.001)
        #expect(object["type"] as? String == "Consumable")
        #expect(object["appAccountToken"] as? String == "207262da-1ac8-4e0a-a399-5aa62a82800f")
        #expect(object["environment"] == nil)
    }

    @Test("kinds are told apart by the members only they carry")
    func detectKind() throws {
        #expect(try UnverifiedSignedData.detectKind(ofPayload: Array(#"{"notificationType":"TEST"}"#.utf8)) == .notification)
        #expect(try UnverifiedSignedData.detectKind(ofPayload: Array(#"{"receiptType":"Xcode"}"#.utf8)) == .appTransaction)
        #expect(try UnverifiedSignedData.detectKind(ofPayload: Array(#"{"bundleId":"b","signedDate":1}"#.utf8)) == .signedTransaction)
        #expect(try UnverifiedSignedData.detectKind(ofPayload: Array(#"{"environment":"Sandbox","signedDate":1}"#.utf8)) == .signedRenewalInfo)
    }
}

public import Foundation

/// Apple-shaped StoreKit 2 payloads as JSON objects, for ``JWSMinter``: every value can be
/// changed, members removed (`payload["bundleId"] = nil`) or added before minting.
public enum JWSPayloads {
    /// Milliseconds since 1970, as Apple writes dates.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    /// A signed transaction payload (an auto-renewable subscription purchase by default).
    public static func transaction(
        bundleId: String = "com.example.storegate",
        environment: String = "Sandbox",
        signedDate: Date = Date(timeIntervalSince1970: 1_700_000_000),
        transactionId: String = "2000000100000001",
        originalTransactionId: String = "2000000100000001",
        productId: String = "com.example.storegate.monthly",
        type: String = "Auto-Renewable Subscription",
        quantity: Int = 1
    ) -> [String: Any] {
        let purchase = milliseconds(signedDate) - 60_000
        var payload: [String: Any] = [
            "transactionId": transactionId,
            "originalTransactionId": originalTransactionId,
            "bundleId": bundleId,
            "productId": productId,
            "purchaseDate": purchase,
            "originalPurchaseDate": purchase,
            "quantity": quantity,
            "type": type,
            "inAppOwnershipType": "PURCHASED",
            "signedDate": milliseconds(signedDate),
            "environment": environment,
            "transactionReason": "PURCHASE",
            "storefront": "USA",
            "storefrontId": "143441",
            "price": 4990,
            "currency": "USD",
        ]
        if type == "Auto-Renewable Subscription" {
            payload["webOrderLineItemId"] = "2000000010000001"
            payload["subscriptionGroupIdentifier"] = "21000001"
            payload["expiresDate"] = purchase + 30 * 86_400_000
        }
        return payload
    }

    /// A signed renewal info payload.
    public static func renewalInfo(
        environment: String = "Sandbox",
        signedDate: Date = Date(timeIntervalSince1970: 1_700_000_000),
        originalTransactionId: String = "2000000100000001",
        productId: String = "com.example.storegate.monthly",
        autoRenewStatus: Int = 1
    ) -> [String: Any] {
        [
            "originalTransactionId": originalTransactionId,
            "autoRenewProductId": productId,
            "productId": productId,
            "autoRenewStatus": autoRenewStatus,
            "signedDate": milliseconds(signedDate),
            "environment": environment,
            "recentSubscriptionStartDate": milliseconds(signedDate) - 60_000,
            "renewalDate": milliseconds(signedDate) + 30 * 86_400_000,
        ]
    }

    /// A signed app transaction payload.
    public static func appTransaction(
        bundleId: String = "com.example.storegate",
        receiptType: String = "Sandbox",
        appAppleId: Int64? = nil,
        signedDate: Date = Date(timeIntervalSince1970: 1_700_000_000)
    ) -> [String: Any] {
        var payload: [String: Any] = [
            "bundleId": bundleId,
            "receiptType": receiptType,
            "applicationVersion": "42",
            "originalApplicationVersion": "1",
            "receiptCreationDate": milliseconds(signedDate),
            "originalPurchaseDate": milliseconds(signedDate) - 86_400_000,
            "requestDate": milliseconds(signedDate),
            "signedDate": milliseconds(signedDate),
            "deviceVerification": "sGDnpg+ozb8uwDSuCDZ2oVZo1CKrbB8ujR8VxCxhykRwyBIK6x6XCyERm8yWrzE8",
            "deviceVerificationNonce": "7edea87d-98f0-42d0-9682-49ca81022f73",
            "appTransactionId": "704000000000000001",
            "originalPlatform": "iOS",
        ]
        if let appAppleId { payload["appAppleId"] = appAppleId }
        return payload
    }

    /// A notification payload whose `data` names the app and environment and carries the
    /// given nested signed data.
    public static func notification(
        type: String = "DID_RENEW",
        subtype: String? = nil,
        bundleId: String = "com.example.storegate",
        environment: String = "Sandbox",
        appAppleId: Int64? = nil,
        signedDate: Date? = Date(timeIntervalSince1970: 1_700_000_000),
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil,
        notificationUUID: String = "6a1e4c2b-9f0d-4e8a-b1c3-5d7e9f0a1b2c"
    ) -> [String: Any] {
        var data: [String: Any] = [
            "bundleId": bundleId,
            "bundleVersion": "42",
            "environment": environment,
        ]
        if let appAppleId { data["appAppleId"] = appAppleId }
        if let signedTransactionInfo { data["signedTransactionInfo"] = signedTransactionInfo }
        if let signedRenewalInfo { data["signedRenewalInfo"] = signedRenewalInfo }
        var payload: [String: Any] = [
            "notificationType": type,
            "notificationUUID": notificationUUID,
            "version": "2.0",
            "data": data,
        ]
        if let subtype { payload["subtype"] = subtype }
        if let signedDate { payload["signedDate"] = milliseconds(signedDate) }
        return payload
    }
}

public import Foundation
public import StoreGateCore

/// The payload of a StoreKit 2 signed transaction (`JWSTransactionDecodedPayload`), with
/// Apple's field names.
///
/// Every member is optional, as Apple documents them; ``VerifiedSignedTransaction/transaction``
/// requires the ones a ledger needs. Dates are Apple's milliseconds since 1970 (Xcode writes
/// fractional ones). Members StoreGate does not know are kept (``unknownMembers``); duplicate members are refused.
public struct JWSTransactionDecodedPayload: Sendable, Hashable, Encodable {
    /// The original transaction identifier of a purchase.
    public var originalTransactionId: String?
    /// The unique identifier of this transaction (purchase, restore or renewal).
    public var transactionId: String?
    /// The identifier of subscription-purchase events across devices, including renewals.
    public var webOrderLineItemId: String?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The product identifier of the in-app purchase.
    public var productId: String?
    /// The subscription group the product belongs to.
    public var subscriptionGroupIdentifier: String?
    /// When the App Store charged the customer (or restored, renewed).
    public var purchaseDate: Date?
    /// The purchase date of the original transaction.
    public var originalPurchaseDate: Date?
    /// When the subscription expires or renews.
    public var expiresDate: Date?
    /// How many consumable products the customer bought.
    public var quantity: Int?
    /// The product type (`type`): consumable, non-consumable, subscriptions.
    public var type: ProductType?
    /// The UUID the app set on the purchase, if it set one.
    public var appAccountToken: UUID?
    /// Purchased, or shared through Family Sharing.
    public var inAppOwnershipType: InAppOwnershipType?
    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// Why the App Store refunded or revoked the transaction.
    public var revocationReason: RevocationReason?
    /// When the App Store refunded or revoked the transaction.
    public var revocationDate: Date?
    /// Whether the customer upgraded to another subscription.
    public var isUpgraded: Bool?
    /// The kind of subscription offer applied.
    public var offerType: OfferType?
    /// The identifier of the offer code or promotional offer.
    public var offerIdentifier: String?
    /// The server environment: `Production`, `Sandbox`, `Xcode`, `LocalTesting`.
    public var environment: AppStoreEnvironment?
    /// The three-letter code of the storefront's country or region.
    public var storefront: String?
    /// Apple's identifier of the storefront.
    public var storefrontId: String?
    /// Purchase or renewal.
    public var transactionReason: TransactionReason?
    /// The price in milliunits of ``currency``.
    public var price: Int64?
    /// The ISO 4217 currency code of ``price``.
    public var currency: String?
    /// The payment mode of the offer.
    public var offerDiscountType: OfferDiscountType?
    /// The app transaction identifier.
    public var appTransactionId: String?
    /// The duration of the offer, as an ISO 8601 duration.
    public var offerPeriod: String?
    /// How the transaction was revoked.
    public var revocationType: RevocationType?
    /// The refunded share of a prorated refund, in milli-percent.
    public var revocationPercentage: Int?
    /// How the subscription's commitment is billed (API 1.21).
    public var billingPlanType: BillingPlanType?
    /// The commitment this transaction belongs to (API 1.21).
    public var commitmentInfo: TransactionCommitmentInfo?
    /// A base64 SHA-384 hash the device uses to check the transaction (StoreKit writes it;
    /// Apple's server libraries do not model it).
    public var deviceVerification: String?
    /// The nonce of ``deviceVerification``.
    public var deviceVerificationNonce: String?

    /// Creates an empty payload; every member absent.
    /// The members StoreGate does not model (yet), in Apple's order with the values Apple
    /// wrote: kept so that `inspect`, `verify --json`, the console and the service's replies
    /// show what Apple added since, instead of dropping it.
    public var unknownMembers = JSONObject(members: [])

    public init() {}

    /// Reads a payload from its JSON bytes (not verified: ``SignedDataVerifier`` verifies).
    ///
    /// - Throws: ``SignedDataError`` in the `payload` step.
    public init(json: [UInt8]) throws(SignedDataError) {
        try self.init(object: JSONReader.readObject(json, code: .malformedJSON, field: "payload"), path: "")
    }

    init(object: JSONObject, path: String) throws(SignedDataError) {
        for (key, value) in object.members {
            let field = path + key
            switch key {
            case "originalTransactionId": originalTransactionId = try value.string(field)
            case "transactionId": transactionId = try value.string(field)
            case "webOrderLineItemId": webOrderLineItemId = try value.string(field)
            case "bundleId": bundleId = try value.string(field)
            case "productId": productId = try value.string(field)
            case "subscriptionGroupIdentifier": subscriptionGroupIdentifier = try value.string(field)
            case "purchaseDate": purchaseDate = try value.date(field)
            case "originalPurchaseDate": originalPurchaseDate = try value.date(field)
            case "expiresDate": expiresDate = try value.date(field)
            case "quantity": quantity = try value.int(field)
            case "type": type = try value.enumeration(field)
            case "appAccountToken": appAccountToken = try value.uuid(field)
            case "inAppOwnershipType": inAppOwnershipType = try value.enumeration(field)
            case "signedDate": signedDate = try value.date(field)
            case "revocationReason": revocationReason = try value.enumeration(field)
            case "revocationDate": revocationDate = try value.date(field)
            case "isUpgraded": isUpgraded = try value.bool(field)
            case "offerType": offerType = try value.enumeration(field)
            case "offerIdentifier": offerIdentifier = try value.string(field)
            case "environment": environment = try value.enumeration(field)
            case "storefront": storefront = try value.string(field)
            case "storefrontId": storefrontId = try value.string(field)
            case "transactionReason": transactionReason = try value.enumeration(field)
            case "price": price = try value.int64(field)
            case "currency": currency = try value.string(field)
            case "offerDiscountType": offerDiscountType = try value.enumeration(field)
            case "appTransactionId": appTransactionId = try value.string(field)
            case "offerPeriod": offerPeriod = try value.string(field)
            case "revocationType": revocationType = try value.enumeration(field)
            case "revocationPercentage": revocationPercentage = try value.int(field)
            case "billingPlanType": billingPlanType = try value.enumeration(field)
            case "commitmentInfo":
                if let nested = try value.object(field) {
                    commitmentInfo = try TransactionCommitmentInfo(object: nested, path: field + ".")
                }
            case "deviceVerification": deviceVerification = try value.string(field)
            case "deviceVerificationNonce": deviceVerificationNonce = try value.string(field)
            default: unknownMembers.members.append((key, value))
            }
        }
    }

    /// Writes Apple's JSON: the same member names, dates as milliseconds since 1970, absent members omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        try container.encodeIfPresent(originalTransactionId, forKey: "originalTransactionId")
        try container.encodeIfPresent(transactionId, forKey: "transactionId")
        try container.encodeIfPresent(webOrderLineItemId, forKey: "webOrderLineItemId")
        try container.encodeIfPresent(bundleId, forKey: "bundleId")
        try container.encodeIfPresent(productId, forKey: "productId")
        try container.encodeIfPresent(subscriptionGroupIdentifier, forKey: "subscriptionGroupIdentifier")
        try container.encodeMilliseconds(purchaseDate, forKey: "purchaseDate")
        try container.encodeMilliseconds(originalPurchaseDate, forKey: "originalPurchaseDate")
        try container.encodeMilliseconds(expiresDate, forKey: "expiresDate")
        try container.encodeIfPresent(quantity, forKey: "quantity")
        try container.encodeIfPresent(type, forKey: "type")
        try container.encodeIfPresent(appAccountToken?.uuidString.lowercased(), forKey: "appAccountToken")
        try container.encodeIfPresent(inAppOwnershipType, forKey: "inAppOwnershipType")
        try container.encodeMilliseconds(signedDate, forKey: "signedDate")
        try container.encodeIfPresent(revocationReason, forKey: "revocationReason")
        try container.encodeMilliseconds(revocationDate, forKey: "revocationDate")
        try container.encodeIfPresent(isUpgraded, forKey: "isUpgraded")
        try container.encodeIfPresent(offerType, forKey: "offerType")
        try container.encodeIfPresent(offerIdentifier, forKey: "offerIdentifier")
        try container.encodeIfPresent(environment, forKey: "environment")
        try container.encodeIfPresent(storefront, forKey: "storefront")
        try container.encodeIfPresent(storefrontId, forKey: "storefrontId")
        try container.encodeIfPresent(transactionReason, forKey: "transactionReason")
        try container.encodeIfPresent(price, forKey: "price")
        try container.encodeIfPresent(currency, forKey: "currency")
        try container.encodeIfPresent(offerDiscountType, forKey: "offerDiscountType")
        try container.encodeIfPresent(appTransactionId, forKey: "appTransactionId")
        try container.encodeIfPresent(offerPeriod, forKey: "offerPeriod")
        try container.encodeIfPresent(revocationType, forKey: "revocationType")
        try container.encodeIfPresent(revocationPercentage, forKey: "revocationPercentage")
        try container.encodeIfPresent(billingPlanType, forKey: "billingPlanType")
        try container.encodeIfPresent(commitmentInfo, forKey: "commitmentInfo")
        try container.encodeIfPresent(deviceVerification, forKey: "deviceVerification")
        try container.encodeIfPresent(deviceVerificationNonce, forKey: "deviceVerificationNonce")
        try container.encodeUnknown(unknownMembers)
    }
}

public import Foundation
public import StoreGateCore

/// The payload of a StoreKit 2 signed renewal info (`JWSRenewalInfoDecodedPayload`), with
/// Apple's field names: the renewal state of one auto-renewable subscription.
///
/// Every member is optional, as Apple documents them. It carries no `bundleId`: a renewal
/// info is tied to an app only through the notification or API call it came with.
/// Dates are Apple's milliseconds since 1970. Unknown members are kept (``unknownMembers``); duplicates refused.
public struct JWSRenewalInfoDecodedPayload: Sendable, Hashable, Encodable {
    /// Why the subscription expired.
    public var expirationIntent: ExpirationIntent?
    /// The original transaction identifier of the subscription.
    public var originalTransactionId: String?
    /// The product the subscription renews to.
    public var autoRenewProductId: String?
    /// The product identifier of the current period.
    public var productId: String?
    /// Whether the subscription renews automatically.
    public var autoRenewStatus: AutoRenewStatus?
    /// Whether the App Store is trying to renew an expired subscription.
    public var isInBillingRetryPeriod: Bool?
    /// Whether the customer responded to a price increase.
    public var priceIncreaseStatus: PriceIncreaseStatus?
    /// When the billing grace period ends.
    public var gracePeriodExpiresDate: Date?
    /// The kind of offer applied at renewal.
    public var offerType: OfferType?
    /// The identifier of the offer applied at renewal.
    public var offerIdentifier: String?
    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// The server environment.
    public var environment: AppStoreEnvironment?
    /// The earliest start date of the latest uninterrupted run of the subscription.
    public var recentSubscriptionStartDate: Date?
    /// When the subscription renews.
    public var renewalDate: Date?
    /// The ISO 4217 currency code of ``renewalPrice``.
    public var currency: String?
    /// The renewal price in milliunits of ``currency``.
    public var renewalPrice: Int64?
    /// The payment mode of the offer applied at renewal.
    public var offerDiscountType: OfferDiscountType?
    /// The win-back offers the customer is eligible for.
    public var eligibleWinBackOfferIds: [String]?
    /// The UUID the app set on the purchase, if it set one.
    public var appAccountToken: UUID?
    /// The app transaction identifier.
    public var appTransactionId: String?
    /// The duration of the offer, as an ISO 8601 duration.
    public var offerPeriod: String?
    /// How the subscription is billed when it renews (API 1.21).
    public var renewalBillingPlanType: BillingPlanType?
    /// What happens when the subscription's commitment ends (API 1.21).
    public var commitmentInfo: RenewalCommitmentInfo?
    /// A base64 SHA-384 hash the device uses to check the transaction (StoreKit writes it;
    /// Apple's server libraries do not model it).
    public var deviceVerification: String?
    /// The nonce of ``deviceVerification``.
    public var deviceVerificationNonce: String?

    /// Creates an empty value; every member absent.
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
            case "expirationIntent": expirationIntent = try value.enumeration(field)
            case "originalTransactionId": originalTransactionId = try value.string(field)
            case "autoRenewProductId": autoRenewProductId = try value.string(field)
            case "productId": productId = try value.string(field)
            case "autoRenewStatus": autoRenewStatus = try value.enumeration(field)
            case "isInBillingRetryPeriod": isInBillingRetryPeriod = try value.bool(field)
            case "priceIncreaseStatus": priceIncreaseStatus = try value.enumeration(field)
            case "gracePeriodExpiresDate": gracePeriodExpiresDate = try value.date(field)
            case "offerType": offerType = try value.enumeration(field)
            case "offerIdentifier": offerIdentifier = try value.string(field)
            case "signedDate": signedDate = try value.date(field)
            case "environment": environment = try value.enumeration(field)
            case "recentSubscriptionStartDate": recentSubscriptionStartDate = try value.date(field)
            case "renewalDate": renewalDate = try value.date(field)
            case "currency": currency = try value.string(field)
            case "renewalPrice": renewalPrice = try value.int64(field)
            case "offerDiscountType": offerDiscountType = try value.enumeration(field)
            case "eligibleWinBackOfferIds": eligibleWinBackOfferIds = try value.stringArray(field)
            case "appAccountToken": appAccountToken = try value.uuid(field)
            case "appTransactionId": appTransactionId = try value.string(field)
            case "offerPeriod": offerPeriod = try value.string(field)
            case "renewalBillingPlanType": renewalBillingPlanType = try value.enumeration(field)
            case "commitmentInfo":
                if let nested = try value.object(field) {
                    commitmentInfo = try RenewalCommitmentInfo(object: nested, path: field + ".")
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
        try container.encodeIfPresent(expirationIntent, forKey: "expirationIntent")
        try container.encodeIfPresent(originalTransactionId, forKey: "originalTransactionId")
        try container.encodeIfPresent(autoRenewProductId, forKey: "autoRenewProductId")
        try container.encodeIfPresent(productId, forKey: "productId")
        try container.encodeIfPresent(autoRenewStatus, forKey: "autoRenewStatus")
        try container.encodeIfPresent(isInBillingRetryPeriod, forKey: "isInBillingRetryPeriod")
        try container.encodeIfPresent(priceIncreaseStatus, forKey: "priceIncreaseStatus")
        try container.encodeMilliseconds(gracePeriodExpiresDate, forKey: "gracePeriodExpiresDate")
        try container.encodeIfPresent(offerType, forKey: "offerType")
        try container.encodeIfPresent(offerIdentifier, forKey: "offerIdentifier")
        try container.encodeMilliseconds(signedDate, forKey: "signedDate")
        try container.encodeIfPresent(environment, forKey: "environment")
        try container.encodeMilliseconds(recentSubscriptionStartDate, forKey: "recentSubscriptionStartDate")
        try container.encodeMilliseconds(renewalDate, forKey: "renewalDate")
        try container.encodeIfPresent(currency, forKey: "currency")
        try container.encodeIfPresent(renewalPrice, forKey: "renewalPrice")
        try container.encodeIfPresent(offerDiscountType, forKey: "offerDiscountType")
        try container.encodeIfPresent(eligibleWinBackOfferIds, forKey: "eligibleWinBackOfferIds")
        try container.encodeIfPresent(appAccountToken?.uuidString.lowercased(), forKey: "appAccountToken")
        try container.encodeIfPresent(appTransactionId, forKey: "appTransactionId")
        try container.encodeIfPresent(offerPeriod, forKey: "offerPeriod")
        try container.encodeIfPresent(renewalBillingPlanType, forKey: "renewalBillingPlanType")
        try container.encodeIfPresent(commitmentInfo, forKey: "commitmentInfo")
        try container.encodeIfPresent(deviceVerification, forKey: "deviceVerification")
        try container.encodeIfPresent(deviceVerificationNonce, forKey: "deviceVerificationNonce")
        try container.encodeUnknown(unknownMembers)
    }
}

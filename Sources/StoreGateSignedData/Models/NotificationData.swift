import Foundation
public import StoreGateCore

/// The `data` of an App Store Server Notification V2 (Apple's `Data`): the app, the
/// environment and the signed transaction and renewal info the notification is about.
///
/// The nested signed data are kept as the compact JWS strings Apple sent;
/// ``SignedDataVerifier`` verifies them.
public struct NotificationData: Sendable, Hashable, Encodable {
    /// The server environment the notification applies to.
    public var environment: AppStoreEnvironment?
    /// The App Store's identifier of the app (absent in the sandbox).
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app's build version.
    public var bundleVersion: String?
    /// The transaction, as a signed JWS.
    public var signedTransactionInfo: String?
    /// The subscription renewal info, as a signed JWS.
    public var signedRenewalInfo: String?
    /// The status of the auto-renewable subscription.
    public var status: SubscriptionStatus?
    /// Why the customer asked for a refund.
    public var consumptionRequestReason: ConsumptionRequestReason?

    /// Creates an empty value; every member absent.
    /// The members StoreGate does not model (yet), in Apple's order with the values Apple
    /// wrote: kept so that `inspect`, `verify --json`, the console and the service's replies
    /// show what Apple added since, instead of dropping it.
    public var unknownMembers = JSONObject(members: [])

    public init() {}

    init(object: JSONObject, path: String) throws(SignedDataError) {
        for (key, value) in object.members {
            let field = path + key
            switch key {
            case "environment": environment = try value.enumeration(field)
            case "appAppleId": appAppleId = try value.int64(field)
            case "bundleId": bundleId = try value.string(field)
            case "bundleVersion": bundleVersion = try value.string(field)
            case "signedTransactionInfo": signedTransactionInfo = try value.string(field)
            case "signedRenewalInfo": signedRenewalInfo = try value.string(field)
            case "status": status = try value.enumeration(field)
            case "consumptionRequestReason": consumptionRequestReason = try value.enumeration(field)
            default: unknownMembers.members.append((key, value))
            }
        }
    }

    /// Writes Apple's JSON: the same member names, dates as milliseconds since 1970, absent members omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        try container.encodeIfPresent(environment, forKey: "environment")
        try container.encodeIfPresent(appAppleId, forKey: "appAppleId")
        try container.encodeIfPresent(bundleId, forKey: "bundleId")
        try container.encodeIfPresent(bundleVersion, forKey: "bundleVersion")
        try container.encodeIfPresent(signedTransactionInfo, forKey: "signedTransactionInfo")
        try container.encodeIfPresent(signedRenewalInfo, forKey: "signedRenewalInfo")
        try container.encodeIfPresent(status, forKey: "status")
        try container.encodeIfPresent(consumptionRequestReason, forKey: "consumptionRequestReason")
        try container.encodeUnknown(unknownMembers)
    }
}

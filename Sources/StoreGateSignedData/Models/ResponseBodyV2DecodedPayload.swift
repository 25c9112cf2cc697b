public import Foundation
public import StoreGateCore

/// The payload of an App Store Server Notification V2 `signedPayload`
/// (`ResponseBodyV2DecodedPayload`), with Apple's field names.
///
/// Exactly one of ``data``, ``summary``, ``externalPurchaseToken`` and ``appData`` names the
/// app and the environment. The signed transaction and renewal info inside ``data`` stay
/// compact JWS strings here; ``SignedDataVerifier/verifyNotification(_:expecting:)`` verifies them too.
public struct ResponseBodyV2DecodedPayload: Sendable, Hashable, Encodable {
    /// What happened (`DID_RENEW`, `REFUND`, `TEST`, …).
    public var notificationType: NotificationTypeV2?
    /// More detail on what happened (`INITIAL_BUY`, `AUTO_RENEW_DISABLED`, …).
    public var subtype: NotificationSubtype?
    /// The unique identifier of the notification; Apple retries with the same one.
    public var notificationUUID: String?
    /// The app, environment and signed data the notification is about.
    public var data: NotificationData?
    /// The outcome of a mass renewal-date extension.
    public var summary: NotificationSummary?
    /// An external purchase token.
    public var externalPurchaseToken: ExternalPurchaseToken?
    /// The app and signed app transaction of an app-level notification.
    public var appData: NotificationAppData?
    /// The notification format version (`2.0`).
    public var version: String?
    /// When the App Store signed the notification.
    public var signedDate: Date?

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
        try self.init(object: JSONReader.readObject(json, code: .malformedJSON, field: "payload"))
    }

    init(object: JSONObject) throws(SignedDataError) {
        for (key, value) in object.members {
            switch key {
            case "notificationType": notificationType = try value.enumeration(key)
            case "subtype": subtype = try value.enumeration(key)
            case "notificationUUID": notificationUUID = try value.string(key)
            case "data":
                if let object = try value.object(key) {
                    data = try NotificationData(object: object, path: "data.")
                }
            case "summary":
                if let object = try value.object(key) {
                    summary = try NotificationSummary(object: object, path: "summary.")
                }
            case "externalPurchaseToken":
                if let object = try value.object(key) {
                    externalPurchaseToken = try ExternalPurchaseToken(object: object, path: "externalPurchaseToken.")
                }
            case "appData":
                if let object = try value.object(key) {
                    appData = try NotificationAppData(object: object, path: "appData.")
                }
            case "version": version = try value.string(key)
            case "signedDate": signedDate = try value.date(key)
            default: unknownMembers.members.append((key, value))
            }
        }
    }

    /// The app and environment the notification names, from whichever of ``data``,
    /// ``summary``, ``externalPurchaseToken`` or ``appData`` it carries (in that order).
    public var subject: (bundleId: String?, appAppleId: Int64?, environment: AppStoreEnvironment?) {
        if let data {
            return (data.bundleId, data.appAppleId, data.environment)
        }
        if let summary {
            return (summary.bundleId, summary.appAppleId, summary.environment)
        }
        if let token = externalPurchaseToken {
            let isSandbox = token.externalPurchaseId?.hasPrefix("SANDBOX") ?? false
            return (token.bundleId, token.appAppleId, isSandbox ? .sandbox : .production)
        }
        if let appData {
            return (appData.bundleId, appData.appAppleId, appData.environment)
        }
        return (nil, nil, nil)
    }

    /// Writes Apple's JSON: the same member names, dates as milliseconds since 1970, absent members omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        try container.encodeIfPresent(notificationType, forKey: "notificationType")
        try container.encodeIfPresent(subtype, forKey: "subtype")
        try container.encodeIfPresent(notificationUUID, forKey: "notificationUUID")
        try container.encodeIfPresent(data, forKey: "data")
        try container.encodeIfPresent(summary, forKey: "summary")
        try container.encodeIfPresent(externalPurchaseToken, forKey: "externalPurchaseToken")
        try container.encodeIfPresent(appData, forKey: "appData")
        try container.encodeIfPresent(version, forKey: "version")
        try container.encodeMilliseconds(signedDate, forKey: "signedDate")
        try container.encodeUnknown(unknownMembers)
    }
}

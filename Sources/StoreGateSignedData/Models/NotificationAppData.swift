import Foundation
public import StoreGateCore

/// The `appData` of an app-level notification (Apple's `AppData`), with the signed app
/// transaction it is about.
public struct NotificationAppData: Sendable, Hashable, Encodable {
    /// The App Store's identifier of the app.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The server environment.
    public var environment: AppStoreEnvironment?
    /// The app transaction, as a signed JWS.
    public var signedAppTransactionInfo: String?

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
            case "appAppleId": appAppleId = try value.int64(field)
            case "bundleId": bundleId = try value.string(field)
            case "environment": environment = try value.enumeration(field)
            case "signedAppTransactionInfo": signedAppTransactionInfo = try value.string(field)
            default: unknownMembers.members.append((key, value))
            }
        }
    }

    /// Writes Apple's JSON: the same member names, dates as milliseconds since 1970, absent members omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        try container.encodeIfPresent(appAppleId, forKey: "appAppleId")
        try container.encodeIfPresent(bundleId, forKey: "bundleId")
        try container.encodeIfPresent(environment, forKey: "environment")
        try container.encodeIfPresent(signedAppTransactionInfo, forKey: "signedAppTransactionInfo")
        try container.encodeUnknown(unknownMembers)
    }
}

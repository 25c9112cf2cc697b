public import Foundation
public import StoreGateCore

/// The `externalPurchaseToken` of an `EXTERNAL_PURCHASE_TOKEN` notification.
///
/// It names no environment; as Apple's libraries do, an `externalPurchaseId` starting with
/// `SANDBOX` means the sandbox, anything else production.
public struct ExternalPurchaseToken: Sendable, Hashable, Encodable {
    /// The identifier of the external purchase token.
    public var externalPurchaseId: String?
    /// When the token was created.
    public var tokenCreationDate: Date?
    /// The App Store's identifier of the app.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?

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
            case "externalPurchaseId": externalPurchaseId = try value.string(field)
            case "tokenCreationDate": tokenCreationDate = try value.date(field)
            case "appAppleId": appAppleId = try value.int64(field)
            case "bundleId": bundleId = try value.string(field)
            default: unknownMembers.members.append((key, value))
            }
        }
    }

    /// Writes Apple's JSON: the same member names, dates as milliseconds since 1970, absent members omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        try container.encodeIfPresent(externalPurchaseId, forKey: "externalPurchaseId")
        try container.encodeMilliseconds(tokenCreationDate, forKey: "tokenCreationDate")
        try container.encodeIfPresent(appAppleId, forKey: "appAppleId")
        try container.encodeIfPresent(bundleId, forKey: "bundleId")
        try container.encodeUnknown(unknownMembers)
    }
}

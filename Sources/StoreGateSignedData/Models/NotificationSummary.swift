import Foundation
public import StoreGateCore

/// The `summary` of a `RENEWAL_EXTENSION` notification with subtype `SUMMARY` (Apple's
/// `Summary`): the outcome of a mass renewal-date extension.
public struct NotificationSummary: Sendable, Hashable, Encodable {
    /// The server environment.
    public var environment: AppStoreEnvironment?
    /// The App Store's identifier of the app.
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The product whose subscriptions were extended.
    public var productId: String?
    /// The identifier of the extension request.
    public var requestIdentifier: String?
    /// The storefronts the request covered.
    public var storefrontCountryCodes: [String]?
    /// How many subscriptions were extended.
    public var succeededCount: Int64?
    /// How many subscriptions could not be extended.
    public var failedCount: Int64?

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
            case "productId": productId = try value.string(field)
            case "requestIdentifier": requestIdentifier = try value.string(field)
            case "storefrontCountryCodes": storefrontCountryCodes = try value.stringArray(field)
            case "succeededCount": succeededCount = try value.int64(field)
            case "failedCount": failedCount = try value.int64(field)
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
        try container.encodeIfPresent(productId, forKey: "productId")
        try container.encodeIfPresent(requestIdentifier, forKey: "requestIdentifier")
        try container.encodeIfPresent(storefrontCountryCodes, forKey: "storefrontCountryCodes")
        try container.encodeIfPresent(succeededCount, forKey: "succeededCount")
        try container.encodeIfPresent(failedCount, forKey: "failedCount")
        try container.encodeUnknown(unknownMembers)
    }
}

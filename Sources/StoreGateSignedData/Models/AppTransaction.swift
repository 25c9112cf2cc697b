public import Foundation
public import StoreGateCore

/// The payload of a StoreKit 2 signed app transaction (`AppTransaction`): proof that the
/// customer got the app from the App Store, with Apple's field names.
///
/// `receiptType` is its environment. Every member is optional, as Apple documents them.
/// Dates are Apple's milliseconds since 1970 (Xcode writes fractional ones and a year-1
/// `originalPurchaseDate`). Unknown members are kept (``unknownMembers``); duplicates refused.
public struct AppTransaction: Sendable, Hashable, Encodable {
    /// The server environment that signed the app transaction.
    public var receiptType: AppStoreEnvironment?
    /// The App Store's identifier of the app (absent in the sandbox).
    public var appAppleId: Int64?
    /// The app's bundle identifier.
    public var bundleId: String?
    /// The app version the transaction was created for.
    public var applicationVersion: String?
    /// The App Store's identifier of that app version.
    public var versionExternalIdentifier: Int64?
    /// When the App Store created the app transaction.
    public var receiptCreationDate: Date?
    /// When the customer first got the app.
    public var originalPurchaseDate: Date?
    /// The app version the customer first got.
    public var originalApplicationVersion: String?
    /// A base64 SHA-384 hash the device uses to check the app transaction.
    public var deviceVerification: String?
    /// The nonce of ``deviceVerification``.
    public var deviceVerificationNonce: String?
    /// When the customer pre-ordered the app.
    public var preorderDate: Date?
    /// The app transaction identifier.
    public var appTransactionId: String?
    /// The platform of the original purchase.
    public var originalPlatform: PurchasePlatform?
    /// When the App Store signed this payload.
    public var signedDate: Date?
    /// When the app asked for the app transaction (written by Xcode).
    public var requestDate: Date?

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
            case "receiptType": receiptType = try value.enumeration(field)
            case "appAppleId": appAppleId = try value.int64(field)
            case "bundleId": bundleId = try value.string(field)
            case "applicationVersion": applicationVersion = try value.string(field)
            case "versionExternalIdentifier": versionExternalIdentifier = try value.int64(field)
            case "receiptCreationDate": receiptCreationDate = try value.date(field)
            case "originalPurchaseDate": originalPurchaseDate = try value.date(field)
            case "originalApplicationVersion": originalApplicationVersion = try value.string(field)
            case "deviceVerification": deviceVerification = try value.string(field)
            case "deviceVerificationNonce": deviceVerificationNonce = try value.string(field)
            case "preorderDate": preorderDate = try value.date(field)
            case "appTransactionId": appTransactionId = try value.string(field)
            case "originalPlatform": originalPlatform = try value.enumeration(field)
            case "signedDate": signedDate = try value.date(field)
            case "requestDate": requestDate = try value.date(field)
            default: unknownMembers.members.append((key, value))
            }
        }
    }

    /// Writes Apple's JSON: the same member names, dates as milliseconds since 1970, absent members omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        try container.encodeIfPresent(receiptType, forKey: "receiptType")
        try container.encodeIfPresent(appAppleId, forKey: "appAppleId")
        try container.encodeIfPresent(bundleId, forKey: "bundleId")
        try container.encodeIfPresent(applicationVersion, forKey: "applicationVersion")
        try container.encodeIfPresent(versionExternalIdentifier, forKey: "versionExternalIdentifier")
        try container.encodeMilliseconds(receiptCreationDate, forKey: "receiptCreationDate")
        try container.encodeMilliseconds(originalPurchaseDate, forKey: "originalPurchaseDate")
        try container.encodeIfPresent(originalApplicationVersion, forKey: "originalApplicationVersion")
        try container.encodeIfPresent(deviceVerification, forKey: "deviceVerification")
        try container.encodeIfPresent(deviceVerificationNonce, forKey: "deviceVerificationNonce")
        try container.encodeMilliseconds(preorderDate, forKey: "preorderDate")
        try container.encodeIfPresent(appTransactionId, forKey: "appTransactionId")
        try container.encodeIfPresent(originalPlatform, forKey: "originalPlatform")
        try container.encodeMilliseconds(signedDate, forKey: "signedDate")
        try container.encodeMilliseconds(requestDate, forKey: "requestDate")
        try container.encodeUnknown(unknownMembers)
    }
}

public import Foundation
public import StoreGateCore

/// The decoded payload of an app receipt, with every field Apple documents.
///
/// Parsing gives an `AppReceipt` whose signature nobody has checked yet; only
/// ``ReceiptVerifier`` turns one into a ``VerifiedReceipt``.
public struct AppReceipt: Hashable, Sendable {
    /// 0: `Production`, `ProductionSandbox`, `Xcode`, … (`nil` in very old receipts).
    public var receiptType: String?
    /// 2: the bundle identifier.
    public var bundleId: String
    /// 2: the raw value bytes of the bundle id attribute (a DER UTF8String), as the device hash uses them.
    public var bundleIdData: [UInt8]
    /// 3: the app version (CFBundleVersion on iOS, CFBundleShortVersionString on macOS).
    public var appVersion: String
    /// 4: the opaque value of the device hash.
    public var opaqueValue: [UInt8]
    /// 5: SHA-1 of device identifier + opaque value + bundle id bytes.
    public var sha1Hash: [UInt8]
    /// 12: when the receipt was created (signed).
    public var creationDate: Date
    /// 17: the in-app purchases, in receipt order.
    public var inAppPurchases: [InAppPurchase]
    /// 19: the version of the app originally purchased.
    public var originalAppVersion: String?
    /// 18: when the app was originally purchased (undocumented, present in App Store receipts).
    public var originalPurchaseDate: Date?
    /// 21: when the receipt expires (Volume Purchase Program; Xcode writes year 4001).
    public var expirationDate: Date?
    /// 1: the app item id (undocumented; 0 in the sandbox).
    public var appItemId: Int64?
    /// 11: the download id (undocumented).
    public var downloadId: Int64?
    /// 16: the version external identifier (undocumented).
    public var versionExternalIdentifier: Int64?
    /// Attributes with numbers StoreGate does not interpret, kept by number.
    public var unknownAttributes: [ReceiptAttribute]

    /// The environment the receipt claims (its type); `ValidatedSigner` decides what is reported.
    public var claimedEnvironment: AppStoreEnvironment {
        AppStoreEnvironment(receiptType: receiptType ?? "")
    }

    public init(
        receiptType: String?,
        bundleId: String,
        bundleIdData: [UInt8],
        appVersion: String,
        opaqueValue: [UInt8],
        sha1Hash: [UInt8],
        creationDate: Date,
        inAppPurchases: [InAppPurchase],
        originalAppVersion: String? = nil,
        originalPurchaseDate: Date? = nil,
        expirationDate: Date? = nil,
        appItemId: Int64? = nil,
        downloadId: Int64? = nil,
        versionExternalIdentifier: Int64? = nil,
        unknownAttributes: [ReceiptAttribute] = []
    ) {
        self.receiptType = receiptType
        self.bundleId = bundleId
        self.bundleIdData = bundleIdData
        self.appVersion = appVersion
        self.opaqueValue = opaqueValue
        self.sha1Hash = sha1Hash
        self.creationDate = creationDate
        self.inAppPurchases = inAppPurchases
        self.originalAppVersion = originalAppVersion
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.appItemId = appItemId
        self.downloadId = downloadId
        self.versionExternalIdentifier = versionExternalIdentifier
        self.unknownAttributes = unknownAttributes
    }
}

/// The attribute numbers of an app receipt payload, app-level and in-app.
///
/// ```
/// ReceiptModule DEFINITIONS ::= BEGIN
/// ReceiptAttribute ::= SEQUENCE {
///     type    INTEGER,
///     version INTEGER,
///     value   OCTET STRING }
/// Payload ::= SET OF ReceiptAttribute
/// InAppAttribute ::= SEQUENCE { type INTEGER, version INTEGER, value OCTET STRING }
/// InAppReceipt ::= SET OF InAppAttribute
/// END
/// ```
///
/// Numbers not listed here are kept by number in ``AppReceipt/unknownAttributes`` and
/// ``InAppPurchase/unknownAttributes``.
public enum ReceiptField: Int, Hashable, Sendable, CaseIterable {
    /// Receipt type (`Production`, `ProductionSandbox`, `Xcode`); undocumented, present in every modern receipt.
    case receiptType = 0
    /// App item id (`adam_id`); undocumented.
    case appItemId = 1
    /// Bundle identifier (UTF8String); its raw DER bytes feed the device hash.
    case bundleId = 2
    /// App version (CFBundleVersion).
    case appVersion = 3
    /// Opaque value used in the device hash.
    case opaqueValue = 4
    /// SHA-1 hash of device identifier, opaque value and bundle id.
    case sha1Hash = 5
    /// Download id; undocumented.
    case downloadId = 11
    /// Receipt creation date.
    case creationDate = 12
    /// Version external identifier; undocumented.
    case versionExternalIdentifier = 16
    /// An in-app purchase receipt (one attribute per purchase).
    case inAppPurchase = 17
    /// Original purchase date of the app; undocumented.
    case originalPurchaseDate = 18
    /// Original application version.
    case originalAppVersion = 19
    /// Receipt expiration date (Volume Purchase Program; Xcode writes year 4001).
    case expirationDate = 21

    /// In-app: quantity.
    case quantity = 1701
    /// In-app: product identifier.
    case productId = 1702
    /// In-app: transaction identifier.
    case transactionId = 1703
    /// In-app: purchase date.
    case purchaseDate = 1704
    /// In-app: original transaction identifier.
    case originalTransactionId = 1705
    /// In-app: original purchase date.
    case inAppOriginalPurchaseDate = 1706
    /// In-app: subscription expiration date.
    case subscriptionExpirationDate = 1708
    /// In-app: web order line item id.
    case webOrderLineItemId = 1711
    /// In-app: cancellation (refund) date.
    case cancellationDate = 1712
    /// In-app: subscription trial period.
    case isTrialPeriod = 1713
    /// In-app: introductory price period.
    case isInIntroOfferPeriod = 1719
    /// In-app: promotional offer identifier.
    case promotionalOfferId = 1721

    /// Apple's JSON name of the field, with its number: `bundle_id (2)`.
    public var label: String {
        let name: String
        switch self {
        case .receiptType: name = "receipt_type"
        case .appItemId: name = "app_item_id"
        case .bundleId: name = "bundle_id"
        case .appVersion: name = "application_version"
        case .opaqueValue: name = "opaque_value"
        case .sha1Hash: name = "sha1_hash"
        case .downloadId: name = "download_id"
        case .creationDate: name = "receipt_creation_date"
        case .versionExternalIdentifier: name = "version_external_identifier"
        case .inAppPurchase: name = "in_app"
        case .originalPurchaseDate: name = "original_purchase_date"
        case .originalAppVersion: name = "original_application_version"
        case .expirationDate: name = "expiration_date"
        case .quantity: name = "quantity"
        case .productId: name = "product_id"
        case .transactionId: name = "transaction_id"
        case .purchaseDate: name = "purchase_date"
        case .originalTransactionId: name = "original_transaction_id"
        case .inAppOriginalPurchaseDate: name = "original_purchase_date"
        case .subscriptionExpirationDate: name = "expires_date"
        case .webOrderLineItemId: name = "web_order_line_item_id"
        case .cancellationDate: name = "cancellation_date"
        case .isTrialPeriod: name = "is_trial_period"
        case .isInIntroOfferPeriod: name = "is_in_intro_offer_period"
        case .promotionalOfferId: name = "promotional_offer_id"
        }
        return "\(name) (\(rawValue))"
    }
}

/// A payload attribute kept as found: its number, version and raw value bytes.
///
/// The value shares the receipt's payload buffer rather than copying it: a large receipt
/// carries thousands of attributes StoreGate does not interpret.
public struct ReceiptAttribute: Hashable, Sendable {
    public let type: Int
    public let version: Int
    public let value: ArraySlice<UInt8>

    public init(type: Int, version: Int, value: [UInt8]) {
        self.type = type
        self.version = version
        self.value = value[...]
    }

    init(type: Int, version: Int, slice: ArraySlice<UInt8>) {
        self.type = type
        self.version = version
        self.value = slice
    }

    public static func == (lhs: ReceiptAttribute, rhs: ReceiptAttribute) -> Bool {
        lhs.type == rhs.type && lhs.version == rhs.version && lhs.value.elementsEqual(rhs.value)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(type)
        hasher.combine(version)
        hasher.combine(value.count)
        for byte in value { hasher.combine(byte) }
    }
}

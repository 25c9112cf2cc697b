public import Foundation
package import StoreGateCore

/// The `receipt` object of a verifyReceipt reply: Apple's decoding of the receipt that was sent.
///
/// Two shapes exist. App receipts (iOS 7 and later) carry `bundle_id`, `application_version`
/// and the purchases in `in_app`. iOS 6-style transaction receipts describe one purchase at
/// the top level (`bid`, `bvrs`, `transaction_id`, `product_id`, …); that purchase is
/// ``legacyTransaction``. Unknown keys are ignored.
///
/// The one shape of verifyReceipt's `receipt` object in StoreGate: Apple's reply decodes into
/// it, a receipt decoded offline becomes one (``init(_:requestDate:)``, what `storegate
/// inspect` prints and the service's replies embed), and either is written back in Apple's
/// spelling by the same writer: Apple's member names and order, `adam_id`-style ids as
/// numbers, each date as `x`, `x_ms` and `x_pst` from one whole millisecond. Encoding gives
/// the same members.
public struct VerifyReceiptReceipt: Sendable, Hashable, Codable {
    /// `Production`, `ProductionSandbox`, `ProductionVPP`, `ProductionVPPSandbox`.
    public var receiptType: String?
    /// `bundle_id` (or `bid` in iOS 6-style receipts).
    public var bundleId: String?
    /// `application_version` (or `bvrs`).
    public var applicationVersion: String?
    /// Apple's `original_application_version`.
    public var originalApplicationVersion: String?
    /// Apple's `adam_id`.
    public var adamId: String?
    /// Apple's `app_item_id`.
    public var appItemId: String?
    /// Apple's `download_id`.
    public var downloadId: String?
    /// Apple's `version_external_identifier`.
    public var versionExternalIdentifier: String?
    /// Apple's `receipt_creation_date_ms` (milliseconds since 1970), as a date.
    public var receiptCreationDate: Date?
    /// Apple's `request_date_ms` (milliseconds since 1970), as a date.
    public var requestDate: Date?
    /// Apple's `original_purchase_date_ms` (milliseconds since 1970), as a date.
    public var originalPurchaseDate: Date?
    /// Apple's `expiration_date_ms` (milliseconds since 1970), as a date.
    public var expirationDate: Date?
    /// Apple's `preorder_date_ms` (milliseconds since 1970), as a date.
    public var preorderDate: Date?
    /// The purchases the receipt holds.
    public var inApp: [VerifyReceiptTransaction]
    /// The purchase an iOS 6-style transaction receipt describes at its top level.
    public var legacyTransaction: VerifyReceiptTransaction?

    /// Creates a value from its parts.
    public init(
        receiptType: String? = nil,
        bundleId: String? = nil,
        applicationVersion: String? = nil,
        originalApplicationVersion: String? = nil,
        adamId: String? = nil,
        appItemId: String? = nil,
        downloadId: String? = nil,
        versionExternalIdentifier: String? = nil,
        receiptCreationDate: Date? = nil,
        requestDate: Date? = nil,
        originalPurchaseDate: Date? = nil,
        expirationDate: Date? = nil,
        preorderDate: Date? = nil,
        inApp: [VerifyReceiptTransaction] = [],
        legacyTransaction: VerifyReceiptTransaction? = nil
    ) {
        self.receiptType = receiptType
        self.bundleId = bundleId
        self.applicationVersion = applicationVersion
        self.originalApplicationVersion = originalApplicationVersion
        self.adamId = adamId
        self.appItemId = appItemId
        self.downloadId = downloadId
        self.versionExternalIdentifier = versionExternalIdentifier
        self.receiptCreationDate = receiptCreationDate
        self.requestDate = requestDate
        self.originalPurchaseDate = originalPurchaseDate
        self.expirationDate = expirationDate
        self.preorderDate = preorderDate
        self.inApp = inApp
        self.legacyTransaction = legacyTransaction
    }

    /// Every purchase the receipt holds: `in_app` and, for iOS 6-style receipts, the top-level one.
    public var transactions: [VerifyReceiptTransaction] {
        inApp + (legacyTransaction.map { [$0] } ?? [])
    }

    /// Decodes the `receipt` object of a reply, either shape (see the type's discussion).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        receiptType = try c.lenientString("receipt_type")
        bundleId = try c.lenientString("bundle_id") ?? c.lenientString("bid")
        applicationVersion = try c.lenientString("application_version") ?? c.lenientString("bvrs")
        originalApplicationVersion = try c.lenientString("original_application_version")
        adamId = try c.lenientString("adam_id")
        appItemId = try c.lenientString("app_item_id") ?? c.lenientString("item_id")
        downloadId = try c.lenientString("download_id")
        versionExternalIdentifier = try c.lenientString("version_external_identifier")
        receiptCreationDate = try c.lenientDate("receipt_creation_date")
        requestDate = try c.lenientDate("request_date")
        originalPurchaseDate = try c.lenientDate("original_purchase_date")
        expirationDate = try c.lenientDate("expiration_date")
        preorderDate = try c.lenientDate("preorder_date")
        inApp = try c.decodeIfPresent([VerifyReceiptTransaction].self, forKey: AnyKey("in_app")) ?? []
        if c.contains(AnyKey("legacy_transaction")) {
            legacyTransaction = try c.decodeIfPresent(VerifyReceiptTransaction.self, forKey: AnyKey("legacy_transaction"))
        } else if c.contains(AnyKey("transaction_id")) {
            // iOS 6 style: the purchase's fields sit beside the receipt's own.
            legacyTransaction = try VerifyReceiptTransaction(from: decoder)
        } else {
            legacyTransaction = nil
        }
    }

    /// Encodes the receipt in Apple's spelling, as `write(to:)` writes it.
    public func encode(to encoder: any Encoder) throws {
        try encodeAsWritten(to: encoder)
    }
}

extension VerifyReceiptReceipt: JSONWritable {
    /// The receipt in Apple's spelling and member order; `in_app` always, and an iOS 6-style
    /// receipt's purchase as `legacy_transaction` (StoreGate's own member, read back as such).
    package func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("receipt_type", receiptType)
            json.appleNumber("adam_id", adamId)
            json.appleNumber("app_item_id", appItemId)
            json.member("bundle_id", bundleId)
            json.member("application_version", applicationVersion)
            json.appleNumber("download_id", downloadId)
            json.appleNumber("version_external_identifier", versionExternalIdentifier)
            json.appleDate("receipt_creation_date", receiptCreationDate)
            json.appleDate("request_date", requestDate)
            json.appleDate("original_purchase_date", originalPurchaseDate)
            json.member("original_application_version", originalApplicationVersion)
            json.appleDate("expiration_date", expirationDate)
            json.appleDate("preorder_date", preorderDate)
            json.member("in_app", inApp)
            json.member("legacy_transaction", legacyTransaction)
        }
    }
}

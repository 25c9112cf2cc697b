import Foundation
public import StoreGateCore

extension AppReceipt {
    /// Decodes a receipt payload (the encapsulated content of the PKCS#7 SignedData).
    ///
    /// Every single-valued field may appear once; a second bundle id, say, is refused rather
    /// than resolved one way or the other. Unknown attribute numbers are kept.
    ///
    /// - Throws: ``ReceiptError`` at the `payload` step naming the field.
    public init(payload: [UInt8], limits: Limits = .default) throws(ReceiptError) {
        self = try payload.withUnsafeBufferPointer { (buffer) throws(ReceiptError) -> AppReceipt in
            try PayloadDecoder(buffer: buffer, owner: payload).appReceipt(limits: limits)
        }
    }

    static func missing(_ field: ReceiptField) -> ReceiptError {
        ReceiptError(.missingField, field: field.label, reason: "the receipt has no \(field.label)")
    }
}

/// Which single-valued fields were seen, as bits: no allocation per purchase.
struct FieldSet {
    private var bits: UInt64 = 0

    /// Inserts `field`; `false` when it was already there.
    mutating func insert(_ field: ReceiptField) -> Bool {
        // App fields are 0…21, in-app fields 1701…1721: both fit in 64 bits.
        let bit: UInt64 = 1 << UInt64(field.rawValue >= 1700 ? field.rawValue - 1700 : field.rawValue)
        defer { bits |= bit }
        return bits & bit == 0
    }
}

/// Walks a payload buffer. `buffer` views `owner`'s storage (same indices); slices of unknown
/// attributes are taken from `owner`, so they share its storage instead of copying.
struct PayloadDecoder {
    let buffer: UnsafeBufferPointer<UInt8>
    let owner: [UInt8]

    func appReceipt(limits: Limits) throws(ReceiptError) -> AppReceipt {
        var receiptType: String?
        var bundleId: String?
        var bundleIdData: [UInt8] = []
        var appVersion: String?
        var opaqueValue: [UInt8]?
        var sha1Hash: [UInt8]?
        var creationDate: Date?
        var originalAppVersion: String?
        var originalPurchaseDate: Date?
        var expirationDate: Date?
        var appItemId: Int64?
        var downloadId: Int64?
        var versionExternalIdentifier: Int64?
        var purchases: [InAppPurchase] = []
        var unknown: [ReceiptAttribute] = []
        var seen = FieldSet()

        let root = try set(spanning: 0..<buffer.count, field: "payload")
        try forEachAttribute(in: root, field: "payload") { (type, version, value, decoder) throws(ReceiptError) in
            guard let field = ReceiptField(rawValue: type), field.rawValue < 1700 else {
                unknown.append(ReceiptAttribute(type: type, version: version, slice: decoder.slice(value)))
                return
            }
            if field == .inAppPurchase {
                guard purchases.count < limits.maxInAppPurchases else {
                    throw ReceiptError(.tooManyPurchases, field: field.label, reason: "more than \(limits.maxInAppPurchases) in-app purchases")
                }
                purchases.append(try decoder.inAppPurchase(decoder.set(spanning: value, field: field.label)))
                return
            }
            guard seen.insert(field) else {
                throw ReceiptError(.duplicateField, field: field.label, reason: "the field appears more than once")
            }
            switch field {
            case .receiptType: receiptType = try decoder.string(value, field)
            case .bundleId:
                bundleId = try decoder.string(value, field)
                bundleIdData = Array(decoder.slice(value))
            case .appVersion: appVersion = try decoder.string(value, field)
            case .opaqueValue: opaqueValue = Array(decoder.slice(value))
            case .sha1Hash: sha1Hash = Array(decoder.slice(value))
            case .creationDate: creationDate = try decoder.date(value, field)
            case .originalAppVersion: originalAppVersion = try decoder.string(value, field)
            case .originalPurchaseDate: originalPurchaseDate = try decoder.date(value, field)
            case .expirationDate: expirationDate = try decoder.date(value, field)
            case .appItemId: appItemId = try decoder.integer(value, field)
            case .downloadId: downloadId = try decoder.integer(value, field)
            case .versionExternalIdentifier: versionExternalIdentifier = try decoder.integer(value, field)
            default:
                unknown.append(ReceiptAttribute(type: type, version: version, slice: decoder.slice(value)))
            }
        }

        guard let bundleId else { throw AppReceipt.missing(.bundleId) }
        guard let appVersion else { throw AppReceipt.missing(.appVersion) }
        guard let opaqueValue else { throw AppReceipt.missing(.opaqueValue) }
        guard let sha1Hash else { throw AppReceipt.missing(.sha1Hash) }
        guard let creationDate else { throw AppReceipt.missing(.creationDate) }
        return AppReceipt(
            receiptType: receiptType,
            bundleId: bundleId,
            bundleIdData: bundleIdData,
            appVersion: appVersion,
            opaqueValue: opaqueValue,
            sha1Hash: sha1Hash,
            creationDate: creationDate,
            inAppPurchases: purchases,
            originalAppVersion: originalAppVersion,
            originalPurchaseDate: originalPurchaseDate,
            expirationDate: expirationDate,
            appItemId: appItemId,
            downloadId: downloadId,
            versionExternalIdentifier: versionExternalIdentifier,
            unknownAttributes: unknown
        )
    }

    /// Decodes one in-app purchase receipt: the SET inside an attribute-17 value.
    func inAppPurchase(_ set: TLVReader.Element) throws(ReceiptError) -> InAppPurchase {
        var quantity: Int?
        var productId: String?
        var transactionId: String?
        var purchaseDate: Date?
        var originalTransactionId: String?
        var originalPurchaseDate: Date?
        var expirationDate: Date?
        var webOrderLineItemId: Int64?
        var cancellationDate: Date?
        var isTrialPeriod: Bool?
        var isInIntroOfferPeriod: Bool?
        var promotionalOfferId: String?
        var unknown: [ReceiptAttribute] = []
        var seen = FieldSet()

        try forEachAttribute(in: set, field: ReceiptField.inAppPurchase.label) { (type, version, value, decoder) throws(ReceiptError) in
            guard let field = ReceiptField(rawValue: type), field.rawValue >= 1700 else {
                unknown.append(ReceiptAttribute(type: type, version: version, slice: decoder.slice(value)))
                return
            }
            guard seen.insert(field) else {
                throw ReceiptError(.duplicateField, field: field.label, reason: "the in-app field appears more than once")
            }
            switch field {
            case .quantity:
                guard let value = try decoder.integer(value, field), let count = Int(exactly: value), count >= 0 else {
                    throw ReceiptError(.malformedPayload, field: field.label, reason: "quantity is not a non-negative integer")
                }
                quantity = count
            case .productId: productId = try decoder.string(value, field)
            case .transactionId: transactionId = try decoder.string(value, field)
            case .purchaseDate: purchaseDate = try decoder.date(value, field)
            case .originalTransactionId: originalTransactionId = try decoder.string(value, field)
            case .inAppOriginalPurchaseDate: originalPurchaseDate = try decoder.date(value, field)
            case .subscriptionExpirationDate: expirationDate = try decoder.date(value, field)
            case .webOrderLineItemId: webOrderLineItemId = try decoder.integer(value, field)
            case .cancellationDate: cancellationDate = try decoder.date(value, field)
            case .isTrialPeriod: isTrialPeriod = try decoder.integer(value, field).map { $0 != 0 }
            case .isInIntroOfferPeriod: isInIntroOfferPeriod = try decoder.integer(value, field).map { $0 != 0 }
            case .promotionalOfferId:
                let text = try decoder.string(value, field)
                promotionalOfferId = text.isEmpty ? nil : text
            default:
                unknown.append(ReceiptAttribute(type: type, version: version, slice: decoder.slice(value)))
            }
        }
        guard let productId, !productId.isEmpty else { throw AppReceipt.missing(.productId) }
        guard let transactionId, !transactionId.isEmpty else { throw AppReceipt.missing(.transactionId) }
        guard let purchaseDate else { throw AppReceipt.missing(.purchaseDate) }
        guard let quantity else { throw AppReceipt.missing(.quantity) }
        return InAppPurchase(
            quantity: quantity,
            productId: productId,
            transactionId: transactionId,
            purchaseDate: purchaseDate,
            originalTransactionId: originalTransactionId.flatMap { $0.isEmpty ? nil : $0 },
            originalPurchaseDate: originalPurchaseDate,
            subscriptionExpirationDate: expirationDate,
            webOrderLineItemId: webOrderLineItemId,
            cancellationDate: cancellationDate,
            isTrialPeriod: isTrialPeriod,
            isInIntroOfferPeriod: isInIntroOfferPeriod,
            promotionalOfferId: promotionalOfferId,
            unknownAttributes: unknown
        )
    }

    /// The SET element that spans `range` exactly.
    func set(spanning range: Range<Int>, field: String) throws(ReceiptError) -> TLVReader.Element {
        let element: TLVReader.Element
        do {
            element = try TLVReader.element(buffer, at: range.lowerBound, limit: range.upperBound)
        } catch {
            throw ReceiptError(.malformedPayload, field: field, reason: "not a DER SET of attributes (\(error))")
        }
        guard element.tag == 0x31, element.end == range.upperBound else {
            throw ReceiptError(.malformedPayload, field: field, reason: "not a DER SET of attributes")
        }
        return element
    }

    /// Calls `body` with each `ReceiptAttribute` (type, version, value range) of a SET, and
    /// the decoder the range belongs to (another one for a chunked value).
    func forEachAttribute(
        in set: TLVReader.Element,
        field: String,
        _ body: (Int, Int, Range<Int>, PayloadDecoder) throws(ReceiptError) -> Void
    ) throws(ReceiptError) {
        var cursor = set.content.lowerBound
        let limit = set.content.upperBound
        while cursor < limit {
            let attribute: TLVReader.Element
            let value: TLVReader.Element
            let typeNumber: Int
            let versionNumber: Int
            do {
                attribute = try TLVReader.element(buffer, at: cursor, limit: limit)
                let end = attribute.content.upperBound
                let type = try TLVReader.element(buffer, at: attribute.content.lowerBound, limit: end)
                let version = try TLVReader.element(buffer, at: type.end, limit: end)
                value = try TLVReader.element(buffer, at: version.end, limit: end)
                guard attribute.tag == 0x30, type.tag == 0x02, version.tag == 0x02, value.end == end,
                      let typeValue = TLVReader.integer(buffer, type.content).flatMap({ Int(exactly: $0) }),
                      let versionValue = TLVReader.integer(buffer, version.content).flatMap({ Int(exactly: $0) })
                else { throw TLVReader.Failure.unsupportedTag }
                typeNumber = typeValue
                versionNumber = versionValue
            } catch {
                throw ReceiptError(.malformedPayload, field: field, reason: "an attribute is not SEQUENCE { INTEGER, INTEGER, OCTET STRING }")
            }
            if value.tag == 0x04 {
                try body(typeNumber, versionNumber, value.content, self)
            } else if value.tag == 0x24 {
                // A chunked value (BER): join it and decode from the joined copy.
                let joined: [UInt8]
                do {
                    joined = try TLVReader.joinedOctets(buffer, of: value)
                } catch {
                    throw ReceiptError(.malformedPayload, field: field, reason: "a chunked attribute value is malformed")
                }
                try joined.withUnsafeBufferPointer { (joinedBuffer) throws(ReceiptError) in
                    try body(typeNumber, versionNumber, 0..<joinedBuffer.count, PayloadDecoder(buffer: joinedBuffer, owner: joined))
                }
            } else {
                throw ReceiptError(.malformedPayload, field: field, reason: "an attribute value is not an OCTET STRING")
            }
            cursor = attribute.end
        }
    }

    /// The value's bytes, sharing the owner's storage.
    func slice(_ range: Range<Int>) -> ArraySlice<UInt8> {
        owner[range]
    }

    /// The single primitive element a value holds.
    private func inner(_ range: Range<Int>, _ field: ReceiptField) throws(ReceiptError) -> TLVReader.Element {
        do {
            let element = try TLVReader.element(buffer, at: range.lowerBound, limit: range.upperBound)
            guard element.end == range.upperBound, !element.isConstructed else { throw TLVReader.Failure.unsupportedTag }
            return element
        } catch {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the value is not one primitive DER element")
        }
    }

    /// A UTF8String, IA5String or PrintableString value; invalid UTF-8 is refused.
    func string(_ range: Range<Int>, _ field: ReceiptField) throws(ReceiptError) -> String {
        let element = try inner(range, field)
        guard element.tag == 0x0C || element.tag == 0x16 || element.tag == 0x13 else {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the value is not a string")
        }
        guard let text = String(strictUTF8: UnsafeBufferPointer(rebasing: buffer[element.content])) else {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the string is not valid UTF-8")
        }
        return text
    }

    /// An RFC 3339 date in an IA5String; `nil` when empty.
    func date(_ range: Range<Int>, _ field: ReceiptField) throws(ReceiptError) -> Date? {
        let element = try inner(range, field)
        guard element.tag == 0x16 || element.tag == 0x0C else {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the value is not a date string")
        }
        do {
            return try ReceiptDate.parse(UnsafeBufferPointer(rebasing: buffer[element.content]))
        } catch {
            throw ReceiptError(.invalidDate, field: field.label, reason: "not an RFC 3339 date")
        }
    }

    /// An INTEGER of at most 8 bytes; `nil` for an empty value.
    func integer(_ range: Range<Int>, _ field: ReceiptField) throws(ReceiptError) -> Int64? {
        if range.isEmpty { return nil }
        let element = try inner(range, field)
        guard element.tag == 0x02, let value = TLVReader.integer(buffer, element.content) else {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the value is not an INTEGER of at most 8 bytes")
        }
        return value
    }
}

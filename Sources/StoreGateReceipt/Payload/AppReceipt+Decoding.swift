import Foundation
import StoreGateCore

extension AppReceipt {
    /// Decodes a receipt payload (the encapsulated content of the PKCS#7 SignedData).
    ///
    /// Every single-valued field may appear once; a second bundle id, say, is refused rather
    /// than resolved one way or the other. Unknown attribute numbers are kept.
    ///
    /// - Throws: ``ReceiptError`` at the ``VerificationStep/payload`` step naming the field.
    public init(payload: [UInt8], limits: Limits = .default) throws(ReceiptError) {
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
        var seen = Set<ReceiptField>()

        let root = try PayloadValue.set(in: payload, range: payload.indices, field: "payload")
        try PayloadValue.forEachAttribute(payload, in: root, field: "payload") { (type, version, value) throws(ReceiptError) in
            guard let field = ReceiptField(rawValue: type), field != .inAppPurchase else {
                if type == ReceiptField.inAppPurchase.rawValue {
                    guard purchases.count < limits.maxInAppPurchases else {
                        throw ReceiptError(.tooManyPurchases, field: ReceiptField.inAppPurchase.label, reason: "more than \(limits.maxInAppPurchases) in-app purchases")
                    }
                    purchases.append(try InAppPurchase(base: value.base, range: value.range))
                } else {
                    unknown.append(ReceiptAttribute(type: type, version: version, value: Array(value.base[value.range])))
                }
                return
            }
            guard seen.insert(field).inserted else {
                throw ReceiptError(.duplicateField, field: field.label, reason: "the field appears more than once")
            }
            switch field {
            case .receiptType: receiptType = try value.string(field)
            case .bundleId:
                bundleId = try value.string(field)
                bundleIdData = Array(value.base[value.range])
            case .appVersion: appVersion = try value.string(field)
            case .opaqueValue: opaqueValue = Array(value.base[value.range])
            case .sha1Hash: sha1Hash = Array(value.base[value.range])
            case .creationDate: creationDate = try value.date(field)
            case .originalAppVersion: originalAppVersion = try value.string(field)
            case .originalPurchaseDate: originalPurchaseDate = try value.date(field)
            case .expirationDate: expirationDate = try value.date(field)
            case .appItemId: appItemId = try value.integer(field)
            case .downloadId: downloadId = try value.integer(field)
            case .versionExternalIdentifier: versionExternalIdentifier = try value.integer(field)
            default:
                // An in-app field number at the top level: kept, not interpreted.
                unknown.append(ReceiptAttribute(type: type, version: version, value: Array(value.base[value.range])))
            }
        }

        guard let bundleId else { throw Self.missing(.bundleId) }
        guard let appVersion else { throw Self.missing(.appVersion) }
        guard let opaqueValue else { throw Self.missing(.opaqueValue) }
        guard let sha1Hash else { throw Self.missing(.sha1Hash) }
        guard let creationDate else { throw Self.missing(.creationDate) }
        self.init(
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

    static func missing(_ field: ReceiptField) -> ReceiptError {
        ReceiptError(.missingField, field: field.label, reason: "the receipt has no \(field.label)")
    }
}

extension InAppPurchase {
    /// Decodes one in-app purchase receipt: the SET inside an attribute-17 value.
    init(base: [UInt8], range: Range<Int>) throws(ReceiptError) {
        let label = ReceiptField.inAppPurchase.label
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
        var seen = Set<ReceiptField>()

        let set = try PayloadValue.set(in: base, range: range, field: label)
        try PayloadValue.forEachAttribute(base, in: set, field: label) { (type, version, value) throws(ReceiptError) in
            guard let field = ReceiptField(rawValue: type), field.rawValue >= 1700 else {
                unknown.append(ReceiptAttribute(type: type, version: version, value: Array(value.base[value.range])))
                return
            }
            guard seen.insert(field).inserted else {
                throw ReceiptError(.duplicateField, field: field.label, reason: "the in-app field appears more than once")
            }
            switch field {
            case .quantity:
                guard let value = try value.integer(field), let count = Int(exactly: value), count >= 0 else {
                    throw ReceiptError(.malformedPayload, field: field.label, reason: "quantity is not a non-negative integer")
                }
                quantity = count
            case .productId: productId = try value.string(field)
            case .transactionId: transactionId = try value.string(field)
            case .purchaseDate: purchaseDate = try value.date(field)
            case .originalTransactionId: originalTransactionId = try value.string(field)
            case .inAppOriginalPurchaseDate: originalPurchaseDate = try value.date(field)
            case .subscriptionExpirationDate: expirationDate = try value.date(field)
            case .webOrderLineItemId: webOrderLineItemId = try value.integer(field)
            case .cancellationDate: cancellationDate = try value.date(field)
            case .isTrialPeriod: isTrialPeriod = try value.integer(field).map { $0 != 0 }
            case .isInIntroOfferPeriod: isInIntroOfferPeriod = try value.integer(field).map { $0 != 0 }
            case .promotionalOfferId:
                let text = try value.string(field)
                promotionalOfferId = text.isEmpty ? nil : text
            default:
                unknown.append(ReceiptAttribute(type: type, version: version, value: Array(value.base[value.range])))
            }
        }
        guard let productId, !productId.isEmpty else { throw AppReceipt.missing(.productId) }
        guard let transactionId, !transactionId.isEmpty else { throw AppReceipt.missing(.transactionId) }
        guard let purchaseDate else { throw AppReceipt.missing(.purchaseDate) }
        guard let quantity else { throw AppReceipt.missing(.quantity) }
        self.init(
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
}

/// An attribute value: a range of a byte buffer, decoded on demand.
struct PayloadValue {
    let base: [UInt8]
    let range: Range<Int>

    /// The SET element that spans `range` exactly.
    static func set(in base: [UInt8], range: Range<Int>, field: String) throws(ReceiptError) -> TLVReader.Element {
        let element: TLVReader.Element
        do {
            element = try TLVReader.element(base, at: range.lowerBound, limit: range.upperBound)
        } catch {
            throw ReceiptError(.malformedPayload, field: field, reason: "not a DER SET of attributes (\(error))")
        }
        guard element.tag == 0x31, element.end == range.upperBound else {
            throw ReceiptError(.malformedPayload, field: field, reason: "not a DER SET of attributes")
        }
        return element
    }

    /// Calls `body` with each `ReceiptAttribute` (type, version, value) of a SET.
    static func forEachAttribute(
        _ base: [UInt8],
        in set: TLVReader.Element,
        field: String,
        _ body: (Int, Int, PayloadValue) throws(ReceiptError) -> Void
    ) throws(ReceiptError) {
        var cursor = set.content.lowerBound
        let limit = set.content.upperBound
        while cursor < limit {
            let attribute: TLVReader.Element
            let type: TLVReader.Element
            let version: TLVReader.Element
            let value: TLVReader.Element
            do {
                attribute = try TLVReader.element(base, at: cursor, limit: limit)
                guard attribute.tag == 0x30 else { throw TLVReader.Failure.unsupportedTag }
                type = try TLVReader.element(base, at: attribute.content.lowerBound, limit: attribute.content.upperBound)
                version = try TLVReader.element(base, at: type.end, limit: attribute.content.upperBound)
                value = try TLVReader.element(base, at: version.end, limit: attribute.content.upperBound)
                guard type.tag == 0x02, version.tag == 0x02, value.end == attribute.content.upperBound || attribute.isIndefinite else {
                    throw TLVReader.Failure.unsupportedTag
                }
            } catch {
                throw ReceiptError(.malformedPayload, field: field, reason: "an attribute is not SEQUENCE { INTEGER, INTEGER, OCTET STRING }")
            }
            guard let typeNumber = TLVReader.integer(base[type.content]).flatMap({ Int(exactly: $0) }),
                  let versionNumber = TLVReader.integer(base[version.content]).flatMap({ Int(exactly: $0) })
            else {
                throw ReceiptError(.malformedPayload, field: field, reason: "an attribute type or version is not a small integer")
            }
            let payloadValue: PayloadValue
            if value.tag == 0x04 {
                payloadValue = PayloadValue(base: base, range: value.content)
            } else if value.tag == 0x24 {
                do {
                    let joined = Array(try TLVReader.octets(base, of: value))
                    payloadValue = PayloadValue(base: joined, range: joined.indices)
                } catch {
                    throw ReceiptError(.malformedPayload, field: field, reason: "a chunked attribute value is malformed")
                }
            } else {
                throw ReceiptError(.malformedPayload, field: field, reason: "an attribute value is not an OCTET STRING")
            }
            try body(typeNumber, versionNumber, payloadValue)
            cursor = attribute.end
        }
    }

    /// The single element the value holds.
    private func inner(_ field: ReceiptField) throws(ReceiptError) -> TLVReader.Element {
        do {
            let element = try TLVReader.element(base, at: range.lowerBound, limit: range.upperBound)
            guard element.end == range.upperBound, !element.isConstructed else { throw TLVReader.Failure.unsupportedTag }
            return element
        } catch {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the value is not one primitive DER element")
        }
    }

    /// A UTF8String, IA5String or PrintableString value; invalid UTF-8 is refused.
    func string(_ field: ReceiptField) throws(ReceiptError) -> String {
        let element = try inner(field)
        guard element.tag == 0x0C || element.tag == 0x16 || element.tag == 0x13 else {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the value is not a string")
        }
        guard let text = String(validating: base[element.content], as: UTF8.self) else {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the string is not valid UTF-8")
        }
        return text
    }

    /// An RFC 3339 date in an IA5String; `nil` when empty.
    func date(_ field: ReceiptField) throws(ReceiptError) -> Date? {
        let element = try inner(field)
        guard element.tag == 0x16 || element.tag == 0x0C else {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the value is not a date string")
        }
        do {
            return try ReceiptDate.parse(base[element.content])
        } catch {
            throw ReceiptError(.invalidDate, field: field.label, reason: "not an RFC 3339 date")
        }
    }

    /// An INTEGER of at most 8 bytes; `nil` for an empty value.
    func integer(_ field: ReceiptField) throws(ReceiptError) -> Int64? {
        if range.isEmpty { return nil }
        let element = try inner(field)
        guard element.tag == 0x02, let value = TLVReader.integer(base[element.content]) else {
            throw ReceiptError(.malformedPayload, field: field.label, reason: "the value is not an INTEGER of at most 8 bytes")
        }
        return value
    }
}

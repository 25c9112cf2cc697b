import Crypto
public import Foundation
import StoreGateCore
import SwiftASN1
import X509
public import _CryptoExtras

/// Mints app receipts: any field values, signed by a ``TestCertificateAuthority`` with SHA-1 or
/// SHA-256, optionally with Apple's encoding quirks — or with the defects an attacker would
/// introduce.
public struct ReceiptMinter: Sendable {
    /// How a date is written in the payload.
    public enum DateStyle: Sendable, Hashable {
        /// `2015-05-23T12:18:09Z`, as the App Store writes.
        case zulu
        /// `2020-07-22T18:33:15+0100`, as Xcode writes (offset in seconds east of UTC).
        case offset(Int)
    }

    /// One in-app purchase entry; `nil` fields are left out.
    public struct Purchase: Sendable, Hashable {
        public var quantity: Int64? = 1
        public var productId: String?
        public var transactionId: String?
        public var purchaseDate: Date?
        public var originalTransactionId: String?
        public var originalPurchaseDate: Date?
        public var subscriptionExpirationDate: Date?
        public var webOrderLineItemId: Int64?
        public var cancellationDate: Date?
        public var isTrialPeriod: Bool?
        public var isInIntroOfferPeriod: Bool?
        public var promotionalOfferId: String?
        /// Extra attributes: (type, version, raw value bytes).
        public var extraAttributes: [ReceiptAttributeSpec] = []

        public init(
            productId: String,
            transactionId: String,
            purchaseDate: Date,
            quantity: Int64? = 1,
            originalTransactionId: String? = nil,
            originalPurchaseDate: Date? = nil,
            subscriptionExpirationDate: Date? = nil,
            webOrderLineItemId: Int64? = nil,
            cancellationDate: Date? = nil,
            isTrialPeriod: Bool? = nil,
            isInIntroOfferPeriod: Bool? = nil,
            promotionalOfferId: String? = nil
        ) {
            self.productId = productId
            self.transactionId = transactionId
            self.purchaseDate = purchaseDate
            self.quantity = quantity
            self.originalTransactionId = originalTransactionId ?? transactionId
            self.originalPurchaseDate = originalPurchaseDate ?? purchaseDate
            self.subscriptionExpirationDate = subscriptionExpirationDate
            self.webOrderLineItemId = webOrderLineItemId
            self.cancellationDate = cancellationDate
            self.isTrialPeriod = isTrialPeriod
            self.isInIntroOfferPeriod = isInIntroOfferPeriod
            self.promotionalOfferId = promotionalOfferId
        }
    }

    /// An attribute written verbatim.
    public struct ReceiptAttributeSpec: Sendable, Hashable {
        public var type: Int64
        public var version: Int64
        public var value: [UInt8]

        public init(type: Int64, version: Int64 = 1, value: [UInt8]) {
            self.type = type
            self.version = version
            self.value = value
        }
    }

    /// The payload fields; `nil` fields are left out.
    public struct Payload: Sendable, Hashable {
        public var receiptType: String? = "ProductionSandbox"
        public var bundleId: String? = "com.example.app"
        public var appVersion: String? = "1"
        public var opaqueValue: [UInt8]? = Array(repeating: 0xA5, count: 16)
        /// The hash; when `nil` and ``deviceIdentifier`` is set, computed from it.
        public var sha1Hash: [UInt8]?
        /// Computes ``sha1Hash`` the way Apple does, for device-hash tests.
        public var deviceIdentifier: [UInt8]?
        public var creationDate: Date? = Date(timeIntervalSince1970: 1_700_000_000)
        public var originalAppVersion: String? = "1.0"
        public var originalPurchaseDate: Date? = Date(timeIntervalSince1970: 1_375_340_400)
        public var expirationDate: Date?
        public var purchases: [Purchase] = []
        public var extraAttributes: [ReceiptAttributeSpec] = []
        public var dateStyle: DateStyle = .zulu

        public init() {}
    }

    /// How the container is written and signed.
    public struct Options: Sendable, Hashable {
        public enum Digest: Sendable, Hashable { case sha1, sha256 }

        public var digest: Digest = .sha256
        /// Name bare `rsaEncryption` (as App Store receipts do) instead of `shaXWithRSAEncryption`.
        public var bareRSAEncryption = true
        /// Indefinite lengths on the outer structure (as Xcode receipts do).
        public var indefiniteLengths = false
        /// The eContent as a chunked OCTET STRING of this piece size (as Xcode receipts do).
        public var contentChunkSize: Int?
        /// Embed the certificates out of DER order: root, leaf, intermediate.
        public var unsortedCertificates = false
        /// Sign over signed attributes (content-type and message-digest) instead of the content.
        public var signedAttributes = false
        /// With ``signedAttributes``: write a wrong message digest.
        public var wrongMessageDigest = false

        public init() {}
    }

    public let authority: TestCertificateAuthority

    public init(authority: TestCertificateAuthority) {
        self.authority = authority
    }

    /// The payload's DER encoding.
    public static func payloadDER(_ payload: Payload) -> [UInt8] {
        var attributes: [[UInt8]] = []
        func add(_ type: Int64, _ value: [UInt8]) {
            attributes.append(DERBuilder.sequence([DERBuilder.integer(type), DERBuilder.integer(1), DERBuilder.octetString(value)]))
        }
        func date(_ value: Date) -> [UInt8] { DERBuilder.ia5String(format(value, payload.dateStyle)) }

        if let value = payload.receiptType { add(0, DERBuilder.utf8String(value)) }
        let bundleIdData = payload.bundleId.map { DERBuilder.utf8String($0) }
        if let bundleIdData { add(2, bundleIdData) }
        if let value = payload.appVersion { add(3, DERBuilder.utf8String(value)) }
        if let value = payload.opaqueValue { add(4, value) }
        var hash = payload.sha1Hash
        if hash == nil, let device = payload.deviceIdentifier {
            hash = Array(Insecure.SHA1.hash(data: device + (payload.opaqueValue ?? []) + (bundleIdData ?? [])))
        }
        add(5, hash ?? Array(repeating: 0, count: 20))
        if let value = payload.creationDate { add(12, date(value)) }
        if let value = payload.originalPurchaseDate { add(18, date(value)) }
        if let value = payload.originalAppVersion { add(19, DERBuilder.utf8String(value)) }
        if let value = payload.expirationDate { add(21, date(value)) }
        for purchase in payload.purchases {
            add(17, purchaseDER(purchase, style: payload.dateStyle))
        }
        for extra in payload.extraAttributes {
            attributes.append(DERBuilder.sequence([DERBuilder.integer(extra.type), DERBuilder.integer(extra.version), DERBuilder.octetString(extra.value)]))
        }
        return DERBuilder.set(attributes)
    }

    static func purchaseDER(_ purchase: Purchase, style: DateStyle) -> [UInt8] {
        var attributes: [[UInt8]] = []
        func add(_ type: Int64, _ value: [UInt8]) {
            attributes.append(DERBuilder.sequence([DERBuilder.integer(type), DERBuilder.integer(1), DERBuilder.octetString(value)]))
        }
        func date(_ value: Date) -> [UInt8] { DERBuilder.ia5String(format(value, style)) }
        if let value = purchase.quantity { add(1701, DERBuilder.integer(value)) }
        if let value = purchase.productId { add(1702, DERBuilder.utf8String(value)) }
        if let value = purchase.transactionId { add(1703, DERBuilder.utf8String(value)) }
        if let value = purchase.purchaseDate { add(1704, date(value)) }
        if let value = purchase.originalTransactionId { add(1705, DERBuilder.utf8String(value)) }
        if let value = purchase.originalPurchaseDate { add(1706, date(value)) }
        if let value = purchase.subscriptionExpirationDate { add(1708, date(value)) }
        if let value = purchase.webOrderLineItemId { add(1711, DERBuilder.integer(value)) }
        if let value = purchase.cancellationDate { add(1712, date(value)) }
        if let value = purchase.isTrialPeriod { add(1713, DERBuilder.integer(value ? 1 : 0)) }
        if let value = purchase.isInIntroOfferPeriod { add(1719, DERBuilder.integer(value ? 1 : 0)) }
        if let value = purchase.promotionalOfferId { add(1721, DERBuilder.utf8String(value)) }
        for extra in purchase.extraAttributes {
            attributes.append(DERBuilder.sequence([DERBuilder.integer(extra.type), DERBuilder.integer(extra.version), DERBuilder.octetString(extra.value)]))
        }
        return DERBuilder.set(attributes)
    }

    /// Writes a date in the given style, whole seconds.
    public static func format(_ date: Date, _ style: DateStyle) -> String {
        switch style {
        case .zulu:
            return CivilTime.rfc3339(date)
        case .offset(let seconds):
            return CivilTime.rfc3339(date, offsetSeconds: seconds)
        }
    }

    /// Mints a receipt from payload fields.
    public func mint(_ payload: Payload, options: Options = Options()) throws -> [UInt8] {
        try sign(content: Self.payloadDER(payload), options: options)
    }

    /// Wraps arbitrary content in a SignedData signed by the authority's leaf (or `signingKey`),
    /// embedding `certificates` (default: the authority's chain).
    public func sign(
        content: [UInt8],
        options: Options = Options(),
        signingKey: _RSA.Signing.PrivateKey? = nil,
        certificates: [[UInt8]]? = nil,
        tamper: (([UInt8]) -> [UInt8])? = nil
    ) throws -> [UInt8] {
        guard let leafKey = signingKey ?? authority.leaf.rsaKey else {
            throw ReceiptMinterError("the authority's leaf key is not RSA")
        }
        let digestOID: ASN1ObjectIdentifier = options.digest == .sha1 ? [1, 3, 14, 3, 2, 26] : [2, 16, 840, 1, 101, 3, 4, 2, 1]
        let signatureOID: ASN1ObjectIdentifier = options.bareRSAEncryption
            ? [1, 2, 840, 113549, 1, 1, 1]
            : (options.digest == .sha1 ? [1, 2, 840, 113549, 1, 1, 5] : [1, 2, 840, 113549, 1, 1, 11])

        func digest(_ bytes: [UInt8]) -> [UInt8] {
            options.digest == .sha1 ? Array(Insecure.SHA1.hash(data: bytes)) : Array(SHA256.hash(data: bytes))
        }
        func rsaSign(_ bytes: [UInt8]) throws -> [UInt8] {
            let signature = options.digest == .sha1
                ? try leafKey.signature(for: Insecure.SHA1.hash(data: bytes), padding: .insecurePKCS1v1_5)
                : try leafKey.signature(for: SHA256.hash(data: bytes), padding: .insecurePKCS1v1_5)
            return Array(signature.rawRepresentation)
        }

        var signedAttributes: [UInt8]?
        var signedBytes = content
        if options.signedAttributes {
            var messageDigest = digest(content)
            if options.wrongMessageDigest { messageDigest[0] ^= 0xFF }
            let attributes = [
                DERBuilder.sequence([DERBuilder.oid([1, 2, 840, 113549, 1, 9, 3]), DERBuilder.set([DERBuilder.oid([1, 2, 840, 113549, 1, 7, 1])])]),
                DERBuilder.sequence([DERBuilder.oid([1, 2, 840, 113549, 1, 9, 4]), DERBuilder.set([DERBuilder.octetString(messageDigest)])]),
            ].flatMap { $0 }
            signedBytes = DERBuilder.element(0x31, attributes)
            signedAttributes = DERBuilder.element(0xA0, attributes)
        }
        let signature = try rsaSign(signedBytes)

        let leaf = authority.leaf.certificate
        var issuerSerializer = DER.Serializer()
        try issuerSerializer.serialize(leaf.issuer)
        let signerInfo = DERBuilder.sequence([
            DERBuilder.integer(1),
            DERBuilder.sequence([issuerSerializer.serializedBytes, DERBuilder.unsignedInteger(Array(leaf.serialNumber.bytes))]),
            DERBuilder.algorithm(digestOID),
            signedAttributes ?? [],
            DERBuilder.algorithm(signatureOID),
            DERBuilder.octetString(signature),
        ])

        var embedded = certificates ?? authority.chainDER
        if options.unsortedCertificates, embedded.count == 3 {
            embedded = [embedded[2], embedded[0], embedded[1]]
        }
        let indefinite = options.indefiniteLengths
        let contentOctets = options.contentChunkSize.map { DERBuilder.chunkedOctetString(content, chunk: $0, indefinite: indefinite) }
            ?? DERBuilder.octetString(content)
        let encapsulated = DERBuilder.constructed(0x30, DERBuilder.oid([1, 2, 840, 113549, 1, 7, 1]) + DERBuilder.constructed(0xA0, contentOctets, indefinite: indefinite), indefinite: indefinite)
        let signedData = DERBuilder.constructed(0x30, [
            DERBuilder.integer(1),
            DERBuilder.set([DERBuilder.algorithm(digestOID)]),
            encapsulated,
            DERBuilder.element(0xA0, embedded.flatMap { $0 }),
            DERBuilder.set([signerInfo]),
        ].flatMap { $0 }, indefinite: indefinite)
        var contentInfo = DERBuilder.constructed(0x30, DERBuilder.oid([1, 2, 840, 113549, 1, 7, 2]) + DERBuilder.constructed(0xA0, signedData, indefinite: indefinite), indefinite: indefinite)
        if let tamper {
            contentInfo = tamper(contentInfo)
        }
        return contentInfo
    }
}

/// A minting failure (a test set-up problem, not a verification result).
public struct ReceiptMinterError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

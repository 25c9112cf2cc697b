public import StoreGateCore

/// A StoreKit 2 JWS split and decoded, **not verified**: for inspecting what a proof says.
///
/// Nothing here is evidence of a purchase; only ``SignedDataVerifier`` produces verified data.
public struct UnverifiedSignedData: Sendable {
    /// A decoded payload of one of the four kinds.
    public enum Payload: Sendable, Hashable {
        /// A signed transaction.
        case transaction(JWSTransactionDecodedPayload)
        /// A signed renewal info.
        case renewalInfo(JWSRenewalInfoDecodedPayload)
        /// A signed app transaction.
        case appTransaction(AppTransaction)
        /// A notification `signedPayload` (its nested signed data still compact JWS strings).
        case notification(ResponseBodyV2DecodedPayload)
    }

    /// The split JWS.
    public let jws: CompactJWS
    /// The kind given or detected.
    public let kind: ProofKind
    /// The decoded payload.
    public let payload: Payload

    /// The kind a JWS's payload reveals by its members; a JWS too broken to decode counts as
    /// a signed transaction (its verification then refuses it and names the step and field).
    public static func detectedKind(_ bytes: [UInt8], limits: Limits = .default) -> ProofKind {
        (try? UnverifiedSignedData(bytes: bytes, limits: limits).kind) ?? .signedTransaction
    }

    /// Splits and decodes a JWS.
    ///
    /// - Parameters:
    ///   - bytes: The compact serialization.
    ///   - kind: The kind of payload; `nil` detects it (see ``detectKind(ofPayload:)``).
    ///   - limits: Size limits.
    /// - Throws: ``SignedDataError`` in the `input`, `structure` or `payload` step.
    public init(bytes: [UInt8], kind: ProofKind? = nil, limits: Limits = .default) throws(SignedDataError) {
        let jws = try CompactJWS(bytes: bytes, limits: limits)
        let object = try jws.payloadObject()
        let kind = kind ?? Self.detectKind(of: object)
        switch kind {
        case .signedTransaction: payload = .transaction(try JWSTransactionDecodedPayload(object: object, path: ""))
        case .signedRenewalInfo: payload = .renewalInfo(try JWSRenewalInfoDecodedPayload(object: object, path: ""))
        case .appTransaction: payload = .appTransaction(try AppTransaction(object: object, path: ""))
        case .notification: payload = .notification(try ResponseBodyV2DecodedPayload(object: object))
        default:
            throw SignedDataError(.invalidField, reason: "\(kind.rawValue) is not a kind of signed data")
        }
        self.jws = jws
        self.kind = kind
    }

    /// Splits and decodes a JWS given as a string.
    public init(_ string: some StringProtocol, kind: ProofKind? = nil, limits: Limits = .default) throws(SignedDataError) {
        try self.init(bytes: Array(string.utf8), kind: kind, limits: limits)
    }

    /// Which kind of payload a JSON payload is, from the members only it carries:
    /// `notificationType`/`notificationUUID` → notification; `receiptType`,
    /// `applicationVersion` or `originalApplicationVersion` → app transaction; `bundleId`,
    /// `transactionId`, `purchaseDate` or `type` → transaction; anything else → renewal info
    /// (which never carries a bundle id).
    public static func detectKind(ofPayload json: [UInt8]) throws(SignedDataError) -> ProofKind {
        detectKind(of: try JSONReader.readObject(json, code: .malformedJSON, field: "payload"))
    }

    static func detectKind(of object: JSONObject) -> ProofKind {
        func has(_ keys: String...) -> Bool { keys.contains { object[$0] != nil } }
        if has("notificationType", "notificationUUID") { return .notification }
        if has("receiptType", "applicationVersion", "originalApplicationVersion") { return .appTransaction }
        if has("bundleId", "transactionId", "purchaseDate", "type") { return .signedTransaction }
        return .signedRenewalInfo
    }
}

extension UnverifiedSignedData.Payload: Encodable {
    /// Writes the payload's own JSON.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .transaction(let payload): try payload.encode(to: encoder)
        case .renewalInfo(let payload): try payload.encode(to: encoder)
        case .appTransaction(let payload): try payload.encode(to: encoder)
        case .notification(let payload): try payload.encode(to: encoder)
        }
    }
}

/// A signature ``OfferSigningService`` made.
public enum OfferSignature: Sendable, Hashable, Encodable {
    /// A StoreKit 1 promotional offer signature with the values the app passes along.
    case promotionalOfferV1(PromotionalOfferSignatureV1)
    /// A StoreKit 2 signature: a compact JWS.
    case jws(kind: OfferSignatureKind, compact: String)

    /// The kind signed.
    public var kind: OfferSignatureKind {
        switch self {
        case .promotionalOfferV1: return .promotionalOfferV1
        case .jws(let kind, _): return kind
        }
    }

    /// Writes `{"kind": …, "signature": …}`: the StoreKit 1 values as an object, a JWS as its
    /// compact string.
    public func encode(to encoder: any Encoder) throws {
        enum Key: String, CodingKey { case kind, signature }
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(kind, forKey: .kind)
        switch self {
        case .promotionalOfferV1(let signature): try container.encode(signature, forKey: .signature)
        case .jws(_, let compact): try container.encode(compact, forKey: .signature)
        }
    }
}

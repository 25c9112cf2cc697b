/// What Extend a Subscription Renewal Date asks of Apple (Apple's `ExtendRenewalDateRequest`):
/// how many days, why, and an identifier that makes a repeated request harmless.
public struct ExtendRenewalDateRequest: Sendable, Hashable {
    /// The most days Apple extends by in one request.
    public static let maximumDays = 90
    /// The longest `requestIdentifier` Apple takes.
    public static let maximumRequestIdentifierLength = 128

    /// Days to extend by (1–90).
    public var extendByDays: Int
    /// Why.
    public var extendReasonCode: ExtendReasonCode
    /// Your identifier of this request (1–128 characters; a UUID is usual). Apple answers a
    /// request it has seen with the first outcome instead of extending again.
    public var requestIdentifier: String

    /// Creates a value from its parts.
    public init(extendByDays: Int, extendReasonCode: ExtendReasonCode, requestIdentifier: String) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }

    /// Apple's rules, checked before calling: Apple would answer 4000009, 4000010 or 4000011.
    func validate() throws(AppStoreClientError) {
        guard (1...Self.maximumDays).contains(extendByDays) else {
            throw AppStoreClientError(.invalidRequest, reason: "extendByDays must be 1 to \(Self.maximumDays), not \(extendByDays)")
        }
        guard extendReasonCode.isDocumented else {
            throw AppStoreClientError(.invalidRequest, reason: "extendReasonCode \(extendReasonCode.rawValue) is not one Apple documents (0-3)")
        }
        try Self.validate(requestIdentifier: requestIdentifier)
    }

    static func validate(requestIdentifier: String) throws(AppStoreClientError) {
        guard !requestIdentifier.isEmpty, requestIdentifier.count <= maximumRequestIdentifierLength else {
            throw AppStoreClientError(.invalidRequest, reason: "the request identifier must be 1 to \(maximumRequestIdentifierLength) characters")
        }
    }

    var wire: ServerAPIWire.ExtendRenewalDateRequest {
        .init(extendByDays: extendByDays, extendReasonCode: extendReasonCode.rawValue, requestIdentifier: requestIdentifier)
    }
}

/// What Extend Subscription Renewal Dates for All Active Subscribers asks of Apple (Apple's
/// `MassExtendRenewalDateRequest`): every active subscriber of one product, optionally only
/// in some storefronts.
public struct MassExtendRenewalDateRequest: Sendable, Hashable {
    /// Days to extend by (1–90).
    public var extendByDays: Int
    /// Why.
    public var extendReasonCode: ExtendReasonCode
    /// Your identifier of this request (1–128 characters; a UUID is usual), which Get Status of
    /// Subscription Renewal Date Extensions takes.
    public var requestIdentifier: String
    /// The auto-renewable subscription's product id.
    public var productId: String
    /// Only subscribers in these storefronts (ISO 3166-1 alpha-3, such as `USA`); every
    /// storefront when empty.
    public var storefrontCountryCodes: [String]

    /// Creates a value from its parts.
    public init(
        extendByDays: Int, extendReasonCode: ExtendReasonCode, requestIdentifier: String, productId: String,
        storefrontCountryCodes: [String] = []
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.productId = productId
        self.storefrontCountryCodes = storefrontCountryCodes
    }

    /// Apple's rules, checked before calling (Apple would answer 4000009, 4000010, 4000011,
    /// 4000023 or 4000028).
    func validate() throws(AppStoreClientError) {
        try ExtendRenewalDateRequest(extendByDays: extendByDays, extendReasonCode: extendReasonCode, requestIdentifier: requestIdentifier).validate()
        guard !productId.isEmpty, productId.utf8.count <= 256 else {
            throw AppStoreClientError(.invalidRequest, reason: "the product id must be 1 to 256 bytes")
        }
        for code in storefrontCountryCodes {
            guard code.utf8.count == 3, code.utf8.allSatisfy({ $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) else {
                throw AppStoreClientError(.invalidRequest, reason: "'\(code)' is not a storefront country code (three capital letters, such as USA)")
            }
        }
    }

    var wire: ServerAPIWire.MassExtendRenewalDateRequest {
        .init(
            extendByDays: extendByDays, extendReasonCode: extendReasonCode.rawValue, requestIdentifier: requestIdentifier,
            productId: productId, storefrontCountryCodes: storefrontCountryCodes.isEmpty ? nil : storefrontCountryCodes
        )
    }
}

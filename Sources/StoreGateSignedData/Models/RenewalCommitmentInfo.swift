public import Foundation
public import StoreGateCore

/// What happens when a subscription's commitment ends (Apple's `RenewalCommitmentInfo`, App
/// Store Server API 1.21).
///
/// Every member is optional, as Apple documents them; unknown members are kept.
public struct RenewalCommitmentInfo: Sendable, Hashable, Encodable {
    /// The product the commitment renews to.
    public var commitmentAutoRenewProductId: String?
    /// Whether the commitment renews.
    public var commitmentAutoRenewStatus: AutoRenewStatus?
    /// How the renewed commitment is billed.
    public var commitmentRenewalBillingPlanType: BillingPlanType?
    /// When the commitment renews.
    public var commitmentRenewalDate: Date?
    /// The renewed commitment's price in milliunits of the renewal info's currency.
    public var commitmentRenewalPrice: Int64?
    /// The members StoreGate does not model (yet), as Apple wrote them.
    public var unknownMembers = JSONObject(members: [])

    /// Creates an empty value; every member absent.
    public init() {}

    init(object: JSONObject, path: String) throws(SignedDataError) {
        for (key, value) in object.members {
            let field = path + key
            switch key {
            case "commitmentAutoRenewProductId": commitmentAutoRenewProductId = try value.string(field)
            case "commitmentAutoRenewStatus": commitmentAutoRenewStatus = try value.enumeration(field)
            case "commitmentRenewalBillingPlanType": commitmentRenewalBillingPlanType = try value.enumeration(field)
            case "commitmentRenewalDate": commitmentRenewalDate = try value.date(field)
            case "commitmentRenewalPrice": commitmentRenewalPrice = try value.int64(field)
            default: unknownMembers.members.append((key, value))
            }
        }
    }

    /// Writes Apple's JSON: the same member names, dates as milliseconds since 1970, absent members omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        try container.encodeIfPresent(commitmentAutoRenewProductId, forKey: "commitmentAutoRenewProductId")
        try container.encodeIfPresent(commitmentAutoRenewStatus, forKey: "commitmentAutoRenewStatus")
        try container.encodeIfPresent(commitmentRenewalBillingPlanType, forKey: "commitmentRenewalBillingPlanType")
        try container.encodeMilliseconds(commitmentRenewalDate, forKey: "commitmentRenewalDate")
        try container.encodeIfPresent(commitmentRenewalPrice, forKey: "commitmentRenewalPrice")
        try container.encodeUnknown(unknownMembers)
    }
}

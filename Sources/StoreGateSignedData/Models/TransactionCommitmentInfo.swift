public import Foundation
public import StoreGateCore

/// The commitment a subscription transaction belongs to (Apple's `TransactionCommitmentInfo`,
/// App Store Server API 1.21): a term billed in several periods.
///
/// Every member is optional, as Apple documents them; unknown members are kept.
public struct TransactionCommitmentInfo: Sendable, Hashable, Encodable {
    /// Which billing period of the commitment this transaction is (1-based).
    public var billingPeriodNumber: Int?
    /// When the commitment ends.
    public var commitmentExpiresDate: Date?
    /// The commitment's whole price in milliunits of the transaction's currency.
    public var commitmentPrice: Int64?
    /// How many billing periods the commitment has.
    public var totalBillingPeriods: Int?
    /// The members StoreGate does not model (yet), as Apple wrote them.
    public var unknownMembers = JSONObject(members: [])

    /// Creates an empty value; every member absent.
    public init() {}

    init(object: JSONObject, path: String) throws(SignedDataError) {
        for (key, value) in object.members {
            let field = path + key
            switch key {
            case "billingPeriodNumber": billingPeriodNumber = try value.int(field)
            case "commitmentExpiresDate": commitmentExpiresDate = try value.date(field)
            case "commitmentPrice": commitmentPrice = try value.int64(field)
            case "totalBillingPeriods": totalBillingPeriods = try value.int(field)
            default: unknownMembers.members.append((key, value))
            }
        }
    }

    /// Writes Apple's JSON: the same member names, dates as milliseconds since 1970, absent members omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberKey.self)
        try container.encodeIfPresent(billingPeriodNumber, forKey: "billingPeriodNumber")
        try container.encodeMilliseconds(commitmentExpiresDate, forKey: "commitmentExpiresDate")
        try container.encodeIfPresent(commitmentPrice, forKey: "commitmentPrice")
        try container.encodeIfPresent(totalBillingPeriods, forKey: "totalBillingPeriods")
        try container.encodeUnknown(unknownMembers)
    }
}

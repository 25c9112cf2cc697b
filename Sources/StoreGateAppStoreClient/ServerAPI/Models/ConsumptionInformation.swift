import Foundation

/// What Send Consumption Information tells Apple about a purchase whose refund a customer
/// requested (Apple's `ConsumptionRequest`).
public struct ConsumptionInformation: Sendable, Hashable {
    /// Whether the app delivered a purchase that works (`deliveryStatus`).
    public enum DeliveryStatus: String, Sendable, Hashable, CaseIterable {
        case delivered = "DELIVERED"
        case undeliveredQualityIssue = "UNDELIVERED_QUALITY_ISSUE"
        case undeliveredWrongItem = "UNDELIVERED_WRONG_ITEM"
        case undeliveredServerOutage = "UNDELIVERED_SERVER_OUTAGE"
        case undeliveredOther = "UNDELIVERED_OTHER"
    }

    /// The app's preference for Apple's decision (`refundPreference`).
    public enum RefundPreference: String, Sendable, Hashable, CaseIterable {
        case decline = "DECLINE"
        case grantFull = "GRANT_FULL"
        case grantProrated = "GRANT_PRORATED"
    }

    /// The customer consented to sharing consumption data (Apple refuses anything but `true`).
    public var customerConsented: Bool
    /// The part of the purchase consumed, in milliunits (0...100,000), when known.
    public var consumptionPercentage: Int?
    /// Whether the purchase was delivered and works.
    public var deliveryStatus: DeliveryStatus
    /// Whether the app offered a free sample, trial or description of the content before the purchase.
    public var sampleContentProvided: Bool
    /// The app's preference, if it states one.
    public var refundPreference: RefundPreference?

    /// Creates a value from its parts.
    public init(
        customerConsented: Bool, consumptionPercentage: Int?, deliveryStatus: DeliveryStatus, sampleContentProvided: Bool,
        refundPreference: RefundPreference? = nil
    ) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.refundPreference = refundPreference
    }

    /// The request body, after Apple's rules are checked.
    func wireBody() throws(AppStoreClientError) -> [UInt8] {
        guard customerConsented else {
            throw AppStoreClientError(.invalidRequest, reason: "Apple accepts consumption information only with the customer's consent")
        }
        if let percentage = consumptionPercentage {
            guard (0...100_000).contains(percentage) else {
                throw AppStoreClientError(.invalidRequest, reason: "consumptionPercentage is 0...100000 milliunits, got \(percentage)")
            }
            guard deliveryStatus == .delivered || percentage == 0 else {
                throw AppStoreClientError(.invalidRequest, reason: "an undelivered purchase has a consumptionPercentage of 0")
            }
        }
        if refundPreference == .grantProrated, (consumptionPercentage ?? 0) == 0 {
            throw AppStoreClientError(.invalidRequest, reason: "GRANT_PRORATED needs a consumptionPercentage above 0")
        }
        var members = [
            "\"customerConsented\":true",
            "\"deliveryStatus\":\"\(deliveryStatus.rawValue)\"",
            "\"sampleContentProvided\":\(sampleContentProvided)",
        ]
        if let consumptionPercentage { members.append("\"consumptionPercentage\":\(consumptionPercentage)") }
        if let refundPreference { members.append("\"refundPreference\":\"\(refundPreference.rawValue)\"") }
        return Array(("{" + members.joined(separator: ",") + "}").utf8)
    }
}

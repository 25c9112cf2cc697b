import Foundation
public import StoreGateCore

/// What Send Consumption Information tells Apple about a purchase whose refund a customer
/// requested (Apple's `ConsumptionRequest`, the body of
/// `PUT /inApps/v2/transactions/consumption/{transactionId}`).
///
/// Apple documents these constraints on the body; ``brokenRule`` names the first one a value
/// breaks and ``AppStoreServerAPIClient/sendConsumptionInformation(transactionId:_:)`` sends
/// nothing that breaks one:
///
/// | rule | Apple's refusal |
/// |---|---|
/// | `customerConsented` is `true` | `InvalidCustomerConsentedError` (4000035) |
/// | `consumptionPercentage` is 0...100000 milliunits | `ConsumptionPercentageOutOfRangeError` |
/// | not `DELIVERED`: `consumptionPercentage` is 0 | `UndeliveredConsumptionPercentageNonZeroError` |
/// | an auto-renewable subscription: no `consumptionPercentage` | `ConsumptionPercentageAutoRenewableSubscriptionError` (4000209) |
/// | `GRANT_PRORATED`, but for an auto-renewable subscription: a `consumptionPercentage` above 0 and below 100000 | (the request is invalid) |
///
/// `deliveryStatus`, `refundPreference` and `sampleContentProvided` are typed here, so their
/// own refusals (4000036, 4000044, 4000041) cannot happen. The last two rules depend on the
/// product's type, which is not part of the body: ``productType`` carries it; when it is
/// `nil` the value must satisfy the rules of every type that allows it (`GRANT_PRORATED` then
/// needs a percentage).
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

    /// One of Apple's documented constraints on the body.
    public enum Rule: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// `customerConsented` is `true`.
        case customerConsented = "customer_consented"
        /// `consumptionPercentage` is 0...100000.
        case percentageInRange = "consumption_percentage_in_range"
        /// With a `deliveryStatus` other than `DELIVERED`, `consumptionPercentage` is 0.
        case undeliveredPercentageZero = "undelivered_consumption_percentage_zero"
        /// An auto-renewable subscription takes no `consumptionPercentage` (Apple computes it).
        case noPercentageForAutoRenewable = "no_consumption_percentage_for_auto_renewable"
        /// `GRANT_PRORATED`, except for an auto-renewable subscription, comes with a
        /// `consumptionPercentage` above 0 and below 100000.
        case proratedNeedsPartialPercentage = "grant_prorated_needs_partial_consumption_percentage"

        /// Apple's words for the rule.
        public var description: String {
            switch self {
            case .customerConsented: "Apple accepts consumption information only with the customer's consent"
            case .percentageInRange: "consumptionPercentage is 0...100000 milliunits"
            case .undeliveredPercentageZero: "an undelivered purchase has a consumptionPercentage of 0"
            case .noPercentageForAutoRenewable: "Apple takes no consumptionPercentage for an auto-renewable subscription"
            case .proratedNeedsPartialPercentage: "GRANT_PRORATED needs a consumptionPercentage above 0 and below 100000"
            }
        }
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
    /// The product's type, when the sender knows it: not sent, it decides which of Apple's
    /// rules apply (``Rule/noPercentageForAutoRenewable``, ``Rule/proratedNeedsPartialPercentage``).
    public var productType: ProductType?

    /// Creates a value from its parts.
    public init(
        customerConsented: Bool, consumptionPercentage: Int?, deliveryStatus: DeliveryStatus, sampleContentProvided: Bool,
        refundPreference: RefundPreference? = nil, productType: ProductType? = nil
    ) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.sampleContentProvided = sampleContentProvided
        self.refundPreference = refundPreference
        self.productType = productType
    }

    /// The first of Apple's rules this value breaks, `nil` when Apple's documentation gives it
    /// no reason to refuse it.
    public var brokenRule: Rule? {
        guard customerConsented else { return .customerConsented }
        let isAutoRenewable = productType == .autoRenewable
        if let percentage = consumptionPercentage {
            guard (0...100_000).contains(percentage) else { return .percentageInRange }
            guard deliveryStatus == .delivered || percentage == 0 else { return .undeliveredPercentageZero }
            guard !isAutoRenewable else { return .noPercentageForAutoRenewable }
        }
        if refundPreference == .grantProrated, !isAutoRenewable {
            guard let percentage = consumptionPercentage, percentage > 0, percentage < 100_000 else { return .proratedNeedsPartialPercentage }
        }
        return nil
    }

    /// The request body, after Apple's rules are checked.
    func wireBody() throws(AppStoreClientError) -> [UInt8] {
        if let rule = brokenRule {
            let value = consumptionPercentage.map { ", got consumptionPercentage \($0)" } ?? ""
            throw AppStoreClientError(.invalidRequest, reason: "\(rule.description)\(value)")
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

public import Foundation

/// What Apple answers to Extend a Subscription Renewal Date (Apple's `ExtendRenewalDateResponse`).
public struct ExtendRenewalDateResponse: Sendable, Hashable, Encodable {
    /// The original transaction id of the subscription.
    public let originalTransactionId: String?
    /// The subscription period's identifier across devices.
    public let webOrderLineItemId: String?
    /// Whether the renewal date moved.
    public let success: Bool
    /// The subscription's new expiration date, when it moved.
    public let effectiveDate: Date?

    /// Creates a value from its parts.
    public init(originalTransactionId: String?, webOrderLineItemId: String?, success: Bool, effectiveDate: Date?) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}

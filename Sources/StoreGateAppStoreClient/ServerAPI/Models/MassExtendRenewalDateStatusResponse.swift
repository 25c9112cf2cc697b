public import Foundation

/// Where a mass renewal date extension stands (Apple's `MassExtendRenewalDateStatusResponse`).
///
/// Apple also announces the end with a `RENEWAL_EXTENSION` notification of subtype `SUMMARY`.
public struct MassExtendRenewalDateStatusResponse: Sendable, Hashable, Encodable {
    /// The request's identifier.
    public let requestIdentifier: String
    /// Whether Apple finished the request.
    public let complete: Bool
    /// When Apple finished it.
    public let completeDate: Date?
    /// Subscriptions extended so far.
    public let succeededCount: Int64?
    /// Subscriptions that could not be extended.
    public let failedCount: Int64?

    /// Creates a value from its parts.
    public init(requestIdentifier: String, complete: Bool, completeDate: Date?, succeededCount: Int64?, failedCount: Int64?) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}

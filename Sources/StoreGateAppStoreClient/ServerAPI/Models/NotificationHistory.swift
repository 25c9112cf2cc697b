public import Foundation
public import StoreGateCore

/// What Get Notification History returns: which notifications, in which time span.
public struct NotificationHistoryQuery: Sendable, Hashable {
    /// Start of the span (Apple keeps 180 days).
    public var startDate: Date
    /// End of the span.
    public var endDate: Date
    /// Only this `notificationType` (such as `REFUND`).
    public var notificationType: String?
    /// Only this `subtype`.
    public var notificationSubtype: String?
    /// Only notifications about this transaction (exclusive with the type filters).
    public var transactionId: String?
    /// Only notifications that did not reach the server.
    public var onlyFailures: Bool

    /// Creates a value from its parts.
    public init(
        startDate: Date,
        endDate: Date,
        notificationType: String? = nil,
        notificationSubtype: String? = nil,
        transactionId: String? = nil,
        onlyFailures: Bool = false
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.notificationType = notificationType
        self.notificationSubtype = notificationSubtype
        self.transactionId = transactionId
        self.onlyFailures = onlyFailures
    }

    var wire: ServerAPIWire.NotificationHistoryRequest {
        ServerAPIWire.NotificationHistoryRequest(
            startDate: Int64(startDate.timeIntervalSince1970 * 1000),
            endDate: Int64(endDate.timeIntervalSince1970 * 1000),
            notificationType: notificationType,
            notificationSubtype: notificationSubtype,
            transactionId: transactionId,
            onlyFailures: onlyFailures ? true : nil
        )
    }
}

/// One attempt of Apple to deliver a notification.
public struct SendAttempt: Sendable, Hashable, Codable {
    /// When Apple tried to deliver.
    public let attemptDate: Date?
    /// `SUCCESS`, `TIMED_OUT`, `TLS_ISSUE`, `CIRCULAR_REDIRECT`, `NO_RESPONSE`, …
    public let sendAttemptResult: String?

    init(_ wire: ServerAPIWire.SendAttemptItem) {
        attemptDate = wire.attemptDate.map { Date(timeIntervalSince1970: Double($0) / 1000) }
        sendAttemptResult = wire.sendAttemptResult
    }
}

/// One notification of the history, verified, with its delivery attempts.
public struct NotificationHistoryItem: Sendable, Hashable {
    /// The verified notification.
    public let notification: VerifiedNotification
    /// Apple's delivery attempts.
    public let sendAttempts: [SendAttempt]
}

/// One page of Get Notification History.
public struct NotificationHistoryPage: Sendable, Hashable {
    /// The notifications of this page.
    public let items: [NotificationHistoryItem]
    /// Whether more pages follow.
    public let hasMore: Bool
    /// The token for the next page.
    public let paginationToken: String?
}

/// The delivery state of a test notification (Get Test Notification Status).
public struct TestNotificationStatus: Sendable, Hashable {
    /// The verified notification.
    public let notification: VerifiedNotification
    /// Apple's delivery attempts.
    public let sendAttempts: [SendAttempt]
}

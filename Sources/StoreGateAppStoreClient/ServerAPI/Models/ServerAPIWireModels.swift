/// The App Store Server API's JSON bodies as Apple sends them: the signed payloads inside are
/// still unverified strings. Internal; the client returns verified types only.
enum ServerAPIWire {
    struct TransactionInfoResponse: Decodable {
        let signedTransactionInfo: String
    }

    struct HistoryResponse: Decodable {
        let revision: String?
        let hasMore: Bool?
        let bundleId: String?
        let appAppleId: Int64?
        let environment: String?
        let signedTransactions: [String]?
    }

    struct StatusResponse: Decodable {
        let environment: String?
        let bundleId: String?
        let appAppleId: Int64?
        let data: [SubscriptionGroupIdentifierItem]?
    }

    struct SubscriptionGroupIdentifierItem: Decodable {
        let subscriptionGroupIdentifier: String?
        let lastTransactions: [LastTransactionsItem]?
    }

    struct LastTransactionsItem: Decodable {
        let status: Int?
        let originalTransactionId: String?
        let signedTransactionInfo: String?
        let signedRenewalInfo: String?
    }

    struct OrderLookupResponse: Decodable {
        let status: Int
        let signedTransactions: [String]?
    }

    struct RefundHistoryResponse: Decodable {
        let signedTransactions: [String]?
        let revision: String?
        let hasMore: Bool?
    }

    struct NotificationHistoryResponse: Decodable {
        let paginationToken: String?
        let hasMore: Bool?
        let notificationHistory: [NotificationHistoryResponseItem]?
    }

    struct NotificationHistoryResponseItem: Decodable {
        let signedPayload: String?
        let sendAttempts: [SendAttemptItem]?
    }

    struct SendAttemptItem: Decodable {
        let attemptDate: Int64?
        let sendAttemptResult: String?
    }

    struct NotificationHistoryRequest: Encodable {
        let startDate: Int64
        let endDate: Int64
        let notificationType: String?
        let notificationSubtype: String?
        let transactionId: String?
        let onlyFailures: Bool?
    }

    struct SendTestNotificationResponse: Decodable {
        let testNotificationToken: String
    }

    struct CheckTestNotificationResponse: Decodable {
        let signedPayload: String?
        let sendAttempts: [SendAttemptItem]?
    }

    struct AppTransactionInfoResponse: Decodable {
        let signedAppTransactionInfo: String?
    }

    struct UpdateAppAccountTokenRequest: Encodable {
        let appAccountToken: String
    }

    struct ExtendRenewalDateRequest: Encodable {
        let extendByDays: Int
        let extendReasonCode: Int
        let requestIdentifier: String
    }

    struct ExtendRenewalDateResponse: Decodable {
        let originalTransactionId: String?
        let webOrderLineItemId: String?
        let success: Bool?
        let effectiveDate: Int64?
    }

    struct MassExtendRenewalDateRequest: Encodable {
        let extendByDays: Int
        let extendReasonCode: Int
        let requestIdentifier: String
        let productId: String
        let storefrontCountryCodes: [String]?
    }

    struct MassExtendRenewalDateResponse: Decodable {
        let requestIdentifier: String?
    }

    struct MassExtendRenewalDateStatusResponse: Decodable {
        let requestIdentifier: String?
        let complete: Bool?
        let completeDate: Int64?
        let succeededCount: Int64?
        let failedCount: Int64?
    }
}

import Foundation

/// An App Store Server API `errorCode` (4000000–5000001), with Apple's documented meanings.
///
/// Every code Apple's App Store Server Library (3.1.2) names for the App Store Server API is a
/// static constant (the Retention Messaging API's own codes, 40001xx–40302xx, are not); an
/// unknown code is kept as it is. The `…Retryable`
/// codes (4040002, 4040004, 4040006, 5000001) and the rate limit (4290000) are retryable.
public struct AppStoreAPIErrorCode: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The number Apple sends.
    public let rawValue: Int

    /// Creates a value from its parts.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// 4000000: The request is invalid.
    public static let generalBadRequest = Self(rawValue: 4000000)
    /// 4000002: The app identifier is invalid.
    public static let invalidAppIdentifier = Self(rawValue: 4000002)
    /// 4000005: The request revision is invalid.
    public static let invalidRequestRevision = Self(rawValue: 4000005)
    /// 4000006: The transaction identifier is invalid.
    public static let invalidTransactionId = Self(rawValue: 4000006)
    /// 4000008: The original transaction identifier is invalid.
    public static let invalidOriginalTransactionId = Self(rawValue: 4000008)
    /// 4000009: The extend-by-days value is invalid.
    public static let invalidExtendByDays = Self(rawValue: 4000009)
    /// 4000010: The extend reason code is invalid.
    public static let invalidExtendReasonCode = Self(rawValue: 4000010)
    /// 4000011: The request identifier is invalid.
    public static let invalidRequestIdentifier = Self(rawValue: 4000011)
    /// 4000012: The start date is too far in the past.
    public static let startDateTooFarInPast = Self(rawValue: 4000012)
    /// 4000013: The end date precedes the start date, or the two are equal.
    public static let startDateAfterEndDate = Self(rawValue: 4000013)
    /// 4000014: The pagination token is invalid.
    public static let invalidPaginationToken = Self(rawValue: 4000014)
    /// 4000015: The start date is invalid.
    public static let invalidStartDate = Self(rawValue: 4000015)
    /// 4000016: The end date is invalid.
    public static let invalidEndDate = Self(rawValue: 4000016)
    /// 4000017: The pagination token expired.
    public static let paginationTokenExpired = Self(rawValue: 4000017)
    /// 4000018: The notification type or subtype is invalid.
    public static let invalidNotificationType = Self(rawValue: 4000018)
    /// 4000019: The request supplied too many filters.
    public static let multipleFiltersSupplied = Self(rawValue: 4000019)
    /// 4000020: The test notification token is invalid.
    public static let invalidTestNotificationToken = Self(rawValue: 4000020)
    /// 4000021: The sort parameter is invalid.
    public static let invalidSort = Self(rawValue: 4000021)
    /// 4000022: The product type parameter is invalid.
    public static let invalidProductType = Self(rawValue: 4000022)
    /// 4000023: The product identifier parameter is invalid.
    public static let invalidProductId = Self(rawValue: 4000023)
    /// 4000024: The subscription group identifier parameter is invalid.
    public static let invalidSubscriptionGroupIdentifier = Self(rawValue: 4000024)
    /// 4000025: The exclude-revoked parameter is invalid.
    public static let invalidExcludeRevoked = Self(rawValue: 4000025)
    /// 4000026: The in-app ownership type parameter is invalid.
    public static let invalidInAppOwnershipType = Self(rawValue: 4000026)
    /// 4000027: A required storefront country code list is empty.
    public static let invalidEmptyStorefrontCountryCodeList = Self(rawValue: 4000027)
    /// 4000028: A storefront country code is invalid.
    public static let invalidStorefrontCountryCode = Self(rawValue: 4000028)
    /// 4000030: The revoked parameter is invalid.
    public static let invalidRevoked = Self(rawValue: 4000030)
    /// 4000031: The status parameter is invalid.
    public static let invalidStatus = Self(rawValue: 4000031)
    /// 4000032: The account tenure value is invalid.
    public static let invalidAccountTenure = Self(rawValue: 4000032)
    /// 4000033: The app account token value is invalid.
    public static let invalidAppAccountToken = Self(rawValue: 4000033)
    /// 4000034: The consumption status value is invalid.
    public static let invalidConsumptionStatus = Self(rawValue: 4000034)
    /// 4000035: The customer consented value is invalid.
    public static let invalidCustomerConsented = Self(rawValue: 4000035)
    /// 4000036: The delivery status value is invalid.
    public static let invalidDeliveryStatus = Self(rawValue: 4000036)
    /// 4000037: The lifetime dollars purchased value is invalid.
    public static let invalidLifetimeDollarsPurchased = Self(rawValue: 4000037)
    /// 4000038: The lifetime dollars refunded value is invalid.
    public static let invalidLifetimeDollarsRefunded = Self(rawValue: 4000038)
    /// 4000039: The platform value is invalid.
    public static let invalidPlatform = Self(rawValue: 4000039)
    /// 4000040: The play time value is invalid.
    public static let invalidPlayTime = Self(rawValue: 4000040)
    /// 4000041: The sample content provided value is invalid.
    public static let invalidSampleContentProvided = Self(rawValue: 4000041)
    /// 4000042: The user status value is invalid.
    public static let invalidUserStatus = Self(rawValue: 4000042)
    /// 4000043: The transaction is not a consumable purchase.
    public static let invalidTransactionNotConsumable = Self(rawValue: 4000043)
    /// 4000047: The endpoint does not support this transaction type.
    public static let invalidTransactionTypeNotSupported = Self(rawValue: 4000047)
    /// 4000048: The endpoint does not support an app transaction id.
    public static let appTransactionIdNotSupported = Self(rawValue: 4000048)
    /// 4000183: The app account token is not a valid UUID.
    public static let invalidAppAccountTokenUUID = Self(rawValue: 4000183)
    /// 4000185: The transaction is for a product obtained through Family Sharing, which the endpoint does not support.
    public static let familyTransactionNotSupported = Self(rawValue: 4000185)
    /// 4000187: The endpoint expects an original transaction identifier.
    public static let transactionIdIsNotOriginalTransactionId = Self(rawValue: 4000187)
    /// 4030004: The subscription is not eligible for a renewal date extension.
    public static let subscriptionExtensionIneligible = Self(rawValue: 4030004)
    /// 4030005: The subscription already has the maximum extensions.
    public static let subscriptionMaxExtension = Self(rawValue: 4030005)
    /// 4030007: A Family Sharing subscription cannot be extended directly.
    public static let familySharedSubscriptionExtensionIneligible = Self(rawValue: 4030007)
    /// 4040001: The App Store account was not found.
    public static let accountNotFound = Self(rawValue: 4040001)
    /// 4040002: The App Store account was not found; try again.
    public static let accountNotFoundRetryable = Self(rawValue: 4040002)
    /// 4040003: The app was not found.
    public static let appNotFound = Self(rawValue: 4040003)
    /// 4040004: The app was not found; try again.
    public static let appNotFoundRetryable = Self(rawValue: 4040004)
    /// 4040005: The original transaction identifier was not found.
    public static let originalTransactionIdNotFound = Self(rawValue: 4040005)
    /// 4040006: The original transaction identifier was not found; try again.
    public static let originalTransactionIdNotFoundRetryable = Self(rawValue: 4040006)
    /// 4040007: No App Store Server Notifications URL is configured for this environment.
    public static let serverNotificationURLNotFound = Self(rawValue: 4040007)
    /// 4040008: The test notification was not found.
    public static let testNotificationNotFound = Self(rawValue: 4040008)
    /// 4040009: The renewal date extension request was not found.
    public static let statusRequestNotFound = Self(rawValue: 4040009)
    /// 4040010: The transaction identifier was not found.
    public static let transactionIdNotFound = Self(rawValue: 4040010)
    /// 4040019: No app transaction exists for the customer.
    public static let appTransactionDoesNotExist = Self(rawValue: 4040019)
    /// 4290000: The request exceeded the rate limit.
    public static let rateLimitExceeded = Self(rawValue: 4290000)
    /// 5000000: An internal error occurred.
    public static let generalInternal = Self(rawValue: 5000000)
    /// 5000001: An internal error occurred; try again.
    public static let generalInternalRetryable = Self(rawValue: 5000001)

    private static let meanings: [Int: String] = [
        4000000: "The request is invalid.",
        4000002: "The app identifier is invalid.",
        4000005: "The request revision is invalid.",
        4000006: "The transaction identifier is invalid.",
        4000008: "The original transaction identifier is invalid.",
        4000009: "The extend-by-days value is invalid.",
        4000010: "The extend reason code is invalid.",
        4000011: "The request identifier is invalid.",
        4000012: "The start date is too far in the past.",
        4000013: "The end date precedes the start date, or the two are equal.",
        4000014: "The pagination token is invalid.",
        4000015: "The start date is invalid.",
        4000016: "The end date is invalid.",
        4000017: "The pagination token expired.",
        4000018: "The notification type or subtype is invalid.",
        4000019: "The request supplied too many filters.",
        4000020: "The test notification token is invalid.",
        4000021: "The sort parameter is invalid.",
        4000022: "The product type parameter is invalid.",
        4000023: "The product identifier parameter is invalid.",
        4000024: "The subscription group identifier parameter is invalid.",
        4000025: "The exclude-revoked parameter is invalid.",
        4000026: "The in-app ownership type parameter is invalid.",
        4000027: "A required storefront country code list is empty.",
        4000028: "A storefront country code is invalid.",
        4000030: "The revoked parameter is invalid.",
        4000031: "The status parameter is invalid.",
        4000032: "The account tenure value is invalid.",
        4000033: "The app account token value is invalid.",
        4000034: "The consumption status value is invalid.",
        4000035: "The customer consented value is invalid.",
        4000036: "The delivery status value is invalid.",
        4000037: "The lifetime dollars purchased value is invalid.",
        4000038: "The lifetime dollars refunded value is invalid.",
        4000039: "The platform value is invalid.",
        4000040: "The play time value is invalid.",
        4000041: "The sample content provided value is invalid.",
        4000042: "The user status value is invalid.",
        4000043: "The transaction is not a consumable purchase.",
        4000047: "The endpoint does not support this transaction type.",
        4000048: "The endpoint does not support an app transaction id.",
        4000183: "The app account token is not a valid UUID.",
        4000185: "The transaction is for a product obtained through Family Sharing, which the endpoint does not support.",
        4000187: "The endpoint expects an original transaction identifier.",
        4030004: "The subscription is not eligible for a renewal date extension.",
        4030005: "The subscription already has the maximum extensions.",
        4030007: "A Family Sharing subscription cannot be extended directly.",
        4040001: "The App Store account was not found.",
        4040002: "The App Store account was not found; try again.",
        4040003: "The app was not found.",
        4040004: "The app was not found; try again.",
        4040005: "The original transaction identifier was not found.",
        4040006: "The original transaction identifier was not found; try again.",
        4040007: "No App Store Server Notifications URL is configured for this environment.",
        4040008: "The test notification was not found.",
        4040009: "The renewal date extension request was not found.",
        4040010: "The transaction identifier was not found.",
        4040019: "No app transaction exists for the customer.",
        4290000: "The request exceeded the rate limit.",
        5000000: "An internal error occurred.",
        5000001: "An internal error occurred; try again.",
    ]

    /// Whether Apple documents this code.
    public var isDocumented: Bool { Self.meanings[rawValue] != nil }

    /// Apple's explanation of the code.
    public var meaning: String { Self.meanings[rawValue] ?? "Undocumented error code \(rawValue)." }

    /// Whether the same request may succeed later.
    public var isRetryable: Bool {
        switch self {
        case .accountNotFoundRetryable, .appNotFoundRetryable, .originalTransactionIdNotFoundRetryable,
             .generalInternalRetryable, .rateLimitExceeded:
            return true
        default:
            return false
        }
    }

    public var description: String { "\(rawValue)" }

    public init(from decoder: any Decoder) throws {
        self.init(rawValue: try decoder.singleValueContainer().decode(Int.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    private struct Body: Decodable {
        let errorCode: Int
    }

    /// The `errorCode` of an error body (`{"errorCode": 4040010, "errorMessage": "…"}`), if it is one.
    static func parse(_ body: [UInt8]) -> AppStoreAPIErrorCode? {
        guard !body.isEmpty, body.count <= 64 << 10 else { return nil }
        do {
            return AppStoreAPIErrorCode(rawValue: try JSONDecoder().decode(Body.self, from: Data(body)).errorCode)
        } catch {
            return nil
        }
    }
}

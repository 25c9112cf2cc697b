/// The `status` of a verifyReceipt reply, with Apple's documented meanings.
///
/// Every documented value is a static constant; an unknown value is kept as it is (and is
/// neither valid nor retryable). 21100–21199 are Apple's "internal data access errors", all
/// temporary.
public struct VerifyReceiptStatus: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The number Apple sends.
    public let rawValue: Int

    /// Creates a value from its parts.
    public init(rawValue: Int) {
        self.rawValue = rawValue
    }

    /// 0: the receipt is valid.
    public static let valid = VerifyReceiptStatus(rawValue: 0)
    /// 21000: the request was not an HTTP POST.
    public static let notPost = VerifyReceiptStatus(rawValue: 21000)
    /// 21001: no longer sent by the App Store.
    public static let unused21001 = VerifyReceiptStatus(rawValue: 21001)
    /// 21002: the `receipt-data` was malformed, or the service had a temporary issue.
    public static let malformedReceiptData = VerifyReceiptStatus(rawValue: 21002)
    /// 21003: the receipt could not be authenticated.
    public static let notAuthenticated = VerifyReceiptStatus(rawValue: 21003)
    /// 21004: the shared secret does not match the one on file.
    public static let sharedSecretMismatch = VerifyReceiptStatus(rawValue: 21004)
    /// 21005: the receipt server was temporarily unable to provide the receipt.
    public static let serverUnavailable = VerifyReceiptStatus(rawValue: 21005)
    /// 21006: the receipt is valid but the subscription has expired (iOS 6-style receipts).
    public static let subscriptionExpired = VerifyReceiptStatus(rawValue: 21006)
    /// 21007: a sandbox receipt was sent to production.
    public static let sandboxReceiptSentToProduction = VerifyReceiptStatus(rawValue: 21007)
    /// 21008: a production receipt was sent to the sandbox.
    public static let productionReceiptSentToSandbox = VerifyReceiptStatus(rawValue: 21008)
    /// 21009: internal data access error.
    public static let internalDataAccessError = VerifyReceiptStatus(rawValue: 21009)
    /// 21010: the user account cannot be found or has been deleted.
    public static let accountNotFound = VerifyReceiptStatus(rawValue: 21010)

    /// Every documented status: 0, 21000–21010 and 21100–21199.
    public static let documented: [VerifyReceiptStatus] =
        [.valid] + (21000...21010).map(VerifyReceiptStatus.init(rawValue:)) + (21100...21199).map(VerifyReceiptStatus.init(rawValue:))

    /// Whether Apple documents this status.
    public var isDocumented: Bool {
        rawValue == 0 || (21000...21010).contains(rawValue) || isInternalDataAccessRange
    }

    /// 21100–21199: Apple's internal data access errors.
    public var isInternalDataAccessRange: Bool { (21100...21199).contains(rawValue) }

    /// Whether the same request may succeed later: 21005, 21009 and 21100–21199.
    public var isRetryable: Bool {
        self == .serverUnavailable || self == .internalDataAccessError || isInternalDataAccessRange
    }

    /// Whether the reply describes a genuine receipt: 0, or 21006 (valid, subscription expired).
    public var isReceiptValid: Bool { self == .valid || self == .subscriptionExpired }

    /// Apple's explanation of the status.
    public var meaning: String {
        switch rawValue {
        case 0: return "The receipt is valid."
        case 21000: return "The request to the App Store was not made using the HTTP POST request method."
        case 21001: return "This status code is no longer sent by the App Store."
        case 21002: return "The data in the receipt-data property was malformed or the service experienced a temporary issue."
        case 21003: return "The receipt could not be authenticated."
        case 21004: return "The shared secret you provided does not match the shared secret on file for your account."
        case 21005: return "The receipt server was temporarily unable to provide the receipt."
        case 21006: return "This receipt is valid but the subscription has expired."
        case 21007: return "This receipt is from the test environment, but it was sent to the production environment for verification."
        case 21008: return "This receipt is from the production environment, but it was sent to the test environment for verification."
        case 21009: return "Internal data access error."
        case 21010: return "The user account cannot be found or has been deleted."
        case 21100...21199: return "Internal data access error (\(rawValue))."
        default: return "Undocumented status \(rawValue)."
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
}

public import StoreGateLedger
import StoreGateReceipt
import StoreGateSignedData
import StoreGateSync

/// The stable `code` of an error reply (`ErrorReply.code` in `openapi.yaml`, whose enum is
/// checked against ``all`` by the tests).
///
/// The service's own codes are the static members here; a refused proof answers the
/// verification vocabulary receipts and JWS share (`signature_invalid`, `chain_untrusted_root`,
/// …), a ledger refusal the ledger's (`owned_by_another_account`, …), an account refresh the
/// sync's (`apple_unavailable`, …). Programs compare codes; messages are for people.
public struct APIErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    // MARK: Authentication and routing

    /// No API key, an unknown one, or (notifications) a signature that fails.
    public static let unauthorized = APIErrorCode(rawValue: "unauthorized")
    /// The key lacks the endpoint's permission.
    public static let forbidden = APIErrorCode(rawValue: "forbidden")
    /// No such endpoint, or no such thing at it.
    public static let notFound = APIErrorCode(rawValue: "not_found")
    /// The path exists, the method does not (`Allow` lists the ones it takes).
    public static let methodNotAllowed = APIErrorCode(rawValue: "method_not_allowed")
    /// The request timed out before it was read.
    public static let requestTimeout = APIErrorCode(rawValue: "request_timeout")
    /// The request is malformed at the HTTP level.
    public static let badRequest = APIErrorCode(rawValue: "bad_request")
    /// Another HTTP-level refusal.
    public static let httpError = APIErrorCode(rawValue: "http_error")

    // MARK: Request bodies and parameters

    /// The body is over `STOREGATE_MAX_BODY_BYTES`.
    public static let bodyTooLarge = APIErrorCode(rawValue: "body_too_large")
    /// The body could not be read.
    public static let bodyUnreadable = APIErrorCode(rawValue: "body_unreadable")
    /// The body is not a JSON object.
    public static let malformedJSON = APIErrorCode(rawValue: "malformed_json")
    /// A member the request does not have.
    public static let unknownField = APIErrorCode(rawValue: "unknown_field")
    /// A required member is absent (also a proof's missing field).
    public static let missingField = APIErrorCode(rawValue: "missing_field")
    /// A member of the wrong type or out of range.
    public static let invalidField = APIErrorCode(rawValue: "invalid_field")
    /// A member appears twice.
    public static let duplicateField = APIErrorCode(rawValue: "duplicate_field")
    /// A path parameter is not valid percent-encoded text.
    public static let invalidPathParameter = APIErrorCode(rawValue: "invalid_path_parameter")
    /// A query parameter is out of its range or set.
    public static let invalidQueryParameter = APIErrorCode(rawValue: "invalid_query_parameter")

    // MARK: The service

    /// The proof's bundle id is not among the configured apps.
    public static let bundleIdNotAccepted = APIErrorCode(rawValue: "bundle_id_not_accepted")
    /// The endpoint needs App Store Server API credentials and the sync on.
    public static let appstoreNotConfigured = APIErrorCode(rawValue: "appstore_not_configured")
    /// The account has no grant of that id.
    public static let grantNotFound = APIErrorCode(rawValue: "grant_not_found")
    /// The catalog defines no such entitlement.
    public static let unknownEntitlement = APIErrorCode(rawValue: "unknown_entitlement")
    /// Signing offers needs the In-App Purchase key (`STOREGATE_OFFER_*`).
    public static let offersNotConfigured = APIErrorCode(rawValue: "offers_not_configured")
    /// `STOREGATE_OFFER_ELIGIBILITY` refuses the offer to this customer (the message says why).
    public static let offerIneligible = APIErrorCode(rawValue: "offer_ineligible")
    /// The ledger could not decide the customer's eligibility; retry.
    public static let offerEligibilityUnavailable = APIErrorCode(rawValue: "offer_eligibility_unavailable")
    /// The account owns no auto-renewable subscription of that original transaction id.
    public static let subscriptionNotFound = APIErrorCode(rawValue: "subscription_not_found")
    /// Apple refused the request for good (the message names Apple's errorCode).
    public static let appleRefused = APIErrorCode(rawValue: "apple_refused")
    /// No delivery of that event to that endpoint.
    public static let deliveryNotFound = APIErrorCode(rawValue: "delivery_not_found")
    /// No configured webhook endpoint has that name.
    public static let webhookEndpointNotFound = APIErrorCode(rawValue: "webhook_endpoint_not_found")
    /// Another instance is changing the webhook endpoint's state; retry (`Retry-After`).
    public static let webhookEndpointBusy = APIErrorCode(rawValue: "webhook_endpoint_busy")
    /// No such analytics metric (docs/analytics.md lists them).
    public static let unknownMetric = APIErrorCode(rawValue: "unknown_metric")
    /// The instance is shutting down; retry on another.
    /// A webhook endpoint of that name already exists.
    public static let webhookEndpointExists = APIErrorCode(rawValue: "webhook_endpoint_exists")
    /// The endpoint changed between the read and the write of a `PATCH` (another request or
    /// instance changed it): read it again and retry.
    public static let webhookEndpointConflict = APIErrorCode(rawValue: "webhook_endpoint_conflict")
    /// The webhook URL is not an `http(s)://host/…` URL.
    public static let webhookURLInvalid = APIErrorCode(rawValue: "webhook_url_invalid")
    /// The webhook URL's host does not resolve.
    public static let webhookHostUnresolvable = APIErrorCode(rawValue: "webhook_host_unresolvable")
    /// The webhook URL's host resolves to a loopback, private, link-local, unspecified,
    /// shared (CGNAT), multicast or reserved address (server-side request forgery).
    public static let webhookAddressForbidden = APIErrorCode(rawValue: "webhook_address_forbidden")
    /// A webhook secret that cannot be used (shorter than 16 bytes, listed twice, too many).
    public static let webhookSecretInvalid = APIErrorCode(rawValue: "webhook_secret_invalid")
    /// An API key of that name exists (in the ledger or the configuration).
    public static let apiKeyExists = APIErrorCode(rawValue: "api_key_exists")
    /// No API key has that name.
    public static let apiKeyNotFound = APIErrorCode(rawValue: "api_key_not_found")
    /// A key configured by `STOREGATE_API_KEYS` or its file is removed there, not through the API.
    public static let apiKeyNotRevocable = APIErrorCode(rawValue: "api_key_not_revocable")
    /// A key may only create keys with permissions it holds itself.
    public static let permissionNotHeld = APIErrorCode(rawValue: "permission_not_held")
    /// The API key sent more requests than its rate limit allows: wait `Retry-After` seconds.
    public static let tooManyRequests = APIErrorCode(rawValue: "too_many_requests")
    public static let shuttingDown = APIErrorCode(rawValue: "shutting_down")
    /// The ledger's database failed (`retryable` says whether retrying may help).
    public static let ledgerUnavailable = APIErrorCode(rawValue: "ledger_unavailable")
    /// The ledger failed otherwise; logged, never detailed.
    public static let ledgerError = APIErrorCode(rawValue: "ledger_error")
    /// Anything else; logged, never detailed.
    public static let internalError = APIErrorCode(rawValue: "internal_error")

    /// The service's own codes.
    public static let serviceCodes: [APIErrorCode] = [
        .unauthorized, .forbidden, .notFound, .methodNotAllowed, .requestTimeout, .badRequest, .httpError, .bodyTooLarge,
        .bodyUnreadable, .malformedJSON, .unknownField, .missingField, .invalidField, .duplicateField, .invalidPathParameter,
        .invalidQueryParameter, .bundleIdNotAccepted, .appstoreNotConfigured, .unknownEntitlement, .grantNotFound, .deliveryNotFound,
        .offersNotConfigured, .offerIneligible, .offerEligibilityUnavailable, .subscriptionNotFound, .appleRefused,
        .webhookEndpointNotFound, .webhookEndpointBusy, .webhookEndpointExists, .webhookEndpointConflict, .webhookURLInvalid,
        .webhookHostUnresolvable, .webhookAddressForbidden, .webhookSecretInvalid, .apiKeyExists, .apiKeyNotFound, .apiKeyNotRevocable,
        .permissionNotHeld, .tooManyRequests, .unknownMetric, .shuttingDown, .ledgerUnavailable,
        .ledgerError, .internalError,
    ]

    /// The codes of an account refresh's failures.
    static let refreshCodes: [SyncError.Code] = [.rateLimited, .appleUnavailable, .rejected, .ledger]

    /// Every code a reply can carry, each once, sorted.
    public static var all: [APIErrorCode] {
        let codes = serviceCodes
            + LedgerError.Code.all.map(APIErrorCode.init)
            + ReceiptError.Code.all.map(APIErrorCode.init)
            + SignedDataError.Code.all.map(APIErrorCode.init)
            + refreshCodes.map(APIErrorCode.init)
        return Set(codes).sorted { $0.rawValue < $1.rawValue }
    }

    /// A ledger refusal's code.
    public init(_ code: LedgerError.Code) { self.init(rawValue: code.description) }
    /// A refused receipt's code.
    init(_ code: ReceiptError.Code) { self.init(rawValue: code.description) }
    /// A refused JWS's code.
    init(_ code: SignedDataError.Code) { self.init(rawValue: code.description) }
    /// A failed refresh's code.
    init(_ code: SyncError.Code) { self.init(rawValue: code.rawValue) }
}

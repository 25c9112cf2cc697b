/// What a transaction cost and under which offer, as Apple's signed transaction states it.
///
/// Only StoreKit 2 signed transactions (and the transactions inside notifications and the App
/// Store Server API's history) carry these facts; an app receipt carries none, so a
/// transaction known only from a receipt has no `MoneyFacts` at all: its price is *unknown*,
/// never guessed. A signed transaction from before Apple added a member (price and currency
/// came in 2023) leaves that member `nil`, with the same meaning.
///
/// Values are Apple's, unchanged: ``price`` in milliunits of ``currency`` (1990 is 1.99), the
/// ``offerType`` number, the ``offerDiscountType`` and ``transactionReason`` strings.
public struct MoneyFacts: Sendable, Hashable, Codable {
    /// The price in milliunits of ``currency`` (Apple's `price`); `nil` when not stated.
    public var price: Int64?
    /// The ISO 4217 code of ``price`` (Apple's `currency`).
    public var currency: String?
    /// The three-letter code of the storefront's country or region (Apple's `storefront`).
    public var storefront: String?
    /// Apple's `offerType`: 1 introductory, 2 promotional, 3 offer code, 4 win-back; `nil`
    /// when no offer applied.
    public var offerType: Int?
    /// The identifier of the promotional offer, offer code or win-back offer.
    public var offerIdentifier: String?
    /// The offer's duration, an ISO 8601 duration (Apple's `offerPeriod`).
    public var offerPeriod: String?
    /// Apple's `offerDiscountType`: `FREE_TRIAL`, `PAY_AS_YOU_GO`, `PAY_UP_FRONT`, `ONE_TIME`.
    public var offerDiscountType: String?
    /// Apple's `transactionReason`: `PURCHASE` or `RENEWAL`.
    public var transactionReason: String?

    /// Creates a value; every member defaults to absent.
    public init(
        price: Int64? = nil, currency: String? = nil, storefront: String? = nil, offerType: Int? = nil,
        offerIdentifier: String? = nil, offerPeriod: String? = nil, offerDiscountType: String? = nil,
        transactionReason: String? = nil
    ) {
        self.price = price
        self.currency = currency
        self.storefront = storefront
        self.offerType = offerType
        self.offerIdentifier = offerIdentifier
        self.offerPeriod = offerPeriod
        self.offerDiscountType = offerDiscountType
        self.transactionReason = transactionReason
    }

    /// Apple's `offerType` of an introductory offer.
    public static let introductoryOffer = 1
    /// Apple's `offerType` of a promotional offer.
    public static let promotionalOffer = 2
    /// Apple's `offerType` of an offer code.
    public static let offerCode = 3
    /// Apple's `offerType` of a win-back offer.
    public static let winBackOffer = 4
    /// Apple's `offerDiscountType` of a free trial.
    public static let freeTrial = "FREE_TRIAL"
    /// Apple's `transactionReason` of an automatic renewal.
    public static let renewal = "RENEWAL"

    /// Whether this period is a free trial: an introductory offer with Apple's free-trial
    /// discount (or, in a signed transaction from before `offerDiscountType` existed, an
    /// introductory offer at a price of zero).
    public var isFreeTrial: Bool {
        guard offerType == Self.introductoryOffer else { return false }
        if let offerDiscountType { return offerDiscountType == Self.freeTrial }
        return price == 0
    }

    /// Whether this period is paid at an introductory price (an introductory offer that is
    /// not a free trial).
    public var isIntroductoryPrice: Bool { offerType == Self.introductoryOffer && !isFreeTrial }

    /// Whether Apple renewed the subscription (`RENEWAL`); `nil` when the reason is not stated.
    public var isRenewal: Bool? { transactionReason.map { $0 == Self.renewal } }
}

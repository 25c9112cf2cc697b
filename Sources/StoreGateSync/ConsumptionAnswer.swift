public import Foundation
public import StoreGateAppStoreClient
public import StoreGateCore
public import StoreGateLedger

/// What the ledger knows about the purchase a consumption request is about.
public struct ConsumptionFacts: Sendable, Hashable {
    /// The purchase as recorded; `nil` when the ledger does not know it.
    public var transaction: RecordedTransaction?
    /// The product's type: the recorded one, else the one Apple's request named.
    public var productType: ProductType?
    /// A consumable recorded for an account: its consumed units allocated to the account's
    /// purchases of the product (``ConsumptionAllocation``).
    public var allocation: ConsumptionAllocation?
    /// When the owning account first purchased anything, when known.
    public var firstPurchaseDate: Date?

    /// Creates facts from their parts.
    public init(
        transaction: RecordedTransaction?, productType: ProductType? = nil, allocation: ConsumptionAllocation? = nil, firstPurchaseDate: Date? = nil
    ) {
        self.transaction = transaction
        self.productType = transaction?.productType ?? productType
        self.allocation = allocation
        self.firstPurchaseDate = firstPurchaseDate
    }

    /// The facts of `transaction` read from its account's entitlements.
    ///
    /// - Parameters:
    ///   - transaction: The purchase as recorded (`nil`: unknown to the ledger).
    ///   - productType: The type Apple's request named, for a purchase the ledger does not know.
    ///   - entitlements: What the owning account holds (`nil` when no account owns it).
    public init(transaction: RecordedTransaction?, productType: ProductType?, entitlements: Entitlements?) {
        self.init(transaction: transaction, productType: productType)
        guard let transaction, let entitlements else { return }
        let all = entitlements.nonConsumables + entitlements.nonRenewingSubscriptions + entitlements.consumables + entitlements.otherProducts
        let dates = all.flatMap(\.transactions).map(\.purchaseDate)
            + entitlements.subscriptions.flatMap(\.transactions).flatMap { [$0.purchaseDate, $0.originalPurchaseDate].compactMap(\.self) }
        firstPurchaseDate = dates.min()
        if transaction.productType == .consumable, let product = entitlements.consumables.first(where: { $0.productId == transaction.productId }) {
            allocation = ConsumptionAllocation(consumed: product.balance?.consumed ?? 0, transactions: product.transactions)
        }
    }
}

/// The answer to one consumption request: the body sent to Apple and how it was decided.
///
/// Every field comes from the ledger when the answer is sent:
///
/// - `customerConsented`: the app's setting; nothing is sent without it.
/// - `deliveryStatus`: `DELIVERED` when the ledger recorded the purchase for an account (the
///   app's server presented its proof, so it granted the purchase), `UNDELIVERED_OTHER` when no
///   account ever claimed it (Apple's notification is all the ledger has).
/// - `consumptionPercentage` (milliunits):
///   - a consumable: the consumed part of **the requested purchase**, the account's consumed
///     units allocated to its purchases of the product oldest purchase first
///     (``ConsumptionAllocation``);
///   - a non-renewing subscription: the part of its period (purchase to expiry) elapsed when
///     the answer is sent, or when it was revoked;
///   - undelivered: 0;
///   - a non-consumable: omitted (the ledger does not know how much of it was used), and an
///     auto-renewable subscription: omitted (Apple computes it, and refuses one).
/// - `sampleContentProvided`: the app's setting.
/// - `refundPreference`: the first rule of the refund policy that holds
///   (``ConsumptionRefundPolicy``), else the fixed preference.
///
/// Then Apple's rules (``ConsumptionInformation/Rule``) are applied: a value Apple would refuse
/// is never sent. The one that can happen is `GRANT_PRORATED` without a partial percentage;
/// it becomes the nearest preference Apple takes — a prorated refund returns the unused part,
/// so with nothing used (0, or undelivered) that is `GRANT_FULL`, with everything used
/// (100000) `DECLINE`, and with the share unknown no preference — and ``adjustment`` says what
/// changed and why.
public struct ConsumptionAnswer: Sendable, Hashable {
    /// The body sent.
    public var information: ConsumptionInformation
    /// What chose the preference: the policy rule as written, or
    /// `STOREGATE_CONSUMPTION_REFUND_PREFERENCE`; `nil` when nothing stated one.
    public var preferenceSource: String?
    /// What was changed to meet Apple's rules and why; `nil` when nothing was.
    public var adjustment: String?

    /// The source named when the fixed preference decided.
    public static let fixedPreferenceSource = "STOREGATE_CONSUMPTION_REFUND_PREFERENCE"

    /// The answer for `facts`.
    ///
    /// - Parameters:
    ///   - facts: What the ledger knows of the purchase.
    ///   - settings: The app's statements and refund policy.
    ///   - date: When the answer is sent (a non-renewing subscription's elapsed part, the
    ///     account's age).
    public init(facts: ConsumptionFacts, settings: ConsumptionSettings, at date: Date) {
        let transaction = facts.transaction
        let delivered = transaction?.account != nil
        let type = facts.productType
        var percentage: Int?
        if !delivered {
            percentage = type == .autoRenewable ? nil : 0
        } else if let transaction {
            switch transaction.productType {
            case .consumable:
                percentage = facts.allocation?.consumptionPercentage(of: transaction.transactionId)
            case .nonRenewing:
                if let expires = transaction.expiresDate, expires > transaction.purchaseDate {
                    let end = min(date, transaction.revocationDate ?? date)
                    let elapsed = end.timeIntervalSince(transaction.purchaseDate) / expires.timeIntervalSince(transaction.purchaseDate)
                    percentage = Int((min(1, max(0, elapsed)) * 100_000).rounded(.down))
                }
            default:
                break
            }
        }
        let request = ConsumptionRefundPolicy.Case(
            productType: type, isDelivered: delivered, consumptionPercentage: percentage,
            accountAge: delivered ? facts.firstPurchaseDate.map { Duration.seconds(max(0, date.timeIntervalSince($0))) } : nil
        )
        var preference = settings.refundPreference
        var source = preference == nil ? nil : Self.fixedPreferenceSource
        if let rule = settings.refundPolicy?.rule(for: request) {
            preference = rule.preference
            source = "rule \(rule)"
        }
        var information = ConsumptionInformation(
            customerConsented: settings.customerConsented, consumptionPercentage: percentage,
            deliveryStatus: delivered ? .delivered : .undeliveredOther, sampleContentProvided: settings.sampleContentProvided,
            refundPreference: preference, productType: type
        )
        self.adjustment = Self.meetAppleRules(&information)
        self.information = information
        self.preferenceSource = source
    }

    /// Changes what Apple's rules refuse into the nearest value they accept.
    ///
    /// - Returns: What changed and why, `nil` when nothing did.
    static func meetAppleRules(_ information: inout ConsumptionInformation) -> String? {
        var notes: [String] = []
        if let percentage = information.consumptionPercentage, !(0...100_000).contains(percentage) {
            information.consumptionPercentage = min(100_000, max(0, percentage))
            notes.append("consumptionPercentage \(percentage) → \(information.consumptionPercentage ?? 0): \(ConsumptionInformation.Rule.percentageInRange)")
        }
        if information.deliveryStatus != .delivered, let percentage = information.consumptionPercentage, percentage != 0 {
            information.consumptionPercentage = 0
            notes.append("consumptionPercentage \(percentage) → 0: \(ConsumptionInformation.Rule.undeliveredPercentageZero)")
        }
        if information.productType == .autoRenewable, let percentage = information.consumptionPercentage {
            information.consumptionPercentage = nil
            notes.append("consumptionPercentage \(percentage) omitted: \(ConsumptionInformation.Rule.noPercentageForAutoRenewable)")
        }
        if information.refundPreference == .grantProrated, information.brokenRule == .proratedNeedsPartialPercentage {
            let why: String
            switch information.consumptionPercentage {
            case nil:
                information.refundPreference = nil
                why = "GRANT_PRORATED → no preference: the ledger does not know how much of this purchase was used"
            case let percentage? where percentage >= 100_000:
                information.refundPreference = .decline
                why = "GRANT_PRORATED → DECLINE: every unit of this purchase was used (consumptionPercentage 100000), so a prorated refund is none"
            case _:
                information.refundPreference = .grantFull
                why = information.deliveryStatus == .delivered
                    ? "GRANT_PRORATED → GRANT_FULL: nothing of this purchase was used (consumptionPercentage 0), so a prorated refund is the whole price"
                    : "GRANT_PRORATED → GRANT_FULL: the purchase was not delivered (consumptionPercentage 0), so a prorated refund is the whole price"
            }
            notes.append(why + "; \(ConsumptionInformation.Rule.proratedNeedsPartialPercentage)")
        }
        return notes.isEmpty ? nil : notes.joined(separator: "; ")
    }
}

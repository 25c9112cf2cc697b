public import Foundation
public import StoreGateCore

/// What signed data whose signature and chain hold claims, as its expectations see it: one
/// shape for every kind, so the per-kind differences live in the checks.
///
/// Only ``SignedDataVerifier`` makes one, after the chain step.
public struct SignedDataClaims: Sendable {
    /// A notification's nested signed data, verified by its own signature and chain.
    public struct Nested: Sendable, Hashable {
        /// The member holding it: `data.signedTransactionInfo`, `data.signedRenewalInfo` or
        /// `appData.signedAppTransactionInfo`.
        public let member: String
        /// Its kind.
        public let kind: ProofKind
        /// The bundle id it names (`nil` for a renewal info, which names none).
        public let bundleId: String?
        /// The environment it claims.
        public let claimedEnvironment: AppStoreEnvironment
        /// The environment StoreGate reports for it.
        public let environment: AppStoreEnvironment

        /// The member naming its environment (`….environment`, or `….receiptType` for an app transaction).
        var environmentField: String {
            member + (kind == .appTransaction ? ".receiptType" : ".environment")
        }

        init(member: String, bundleId: String?, details: SignedDataDetails) {
            self.member = member
            self.kind = details.kind
            self.bundleId = bundleId
            self.claimedEnvironment = details.claimedEnvironment
            self.environment = details.environment
        }
    }

    /// The payload members the checks name in their errors.
    struct Fields: Sendable {
        var bundleId = "bundleId"
        var environment = "environment"
        var appAppleId = "appAppleId"
        var productId = "productId"
        var transactionId = "transactionId"

        /// A transaction's or a renewal info's.
        static let payload = Fields()
        /// An app transaction's: its environment is `receiptType`.
        static let appTransaction = Fields(environment: "receiptType")

        /// A notification's: the app and environment under `subject` (`data.`, `summary.`, …),
        /// the product and transaction in its nested transaction.
        static func notification(subject: String) -> Fields {
            Fields(
                bundleId: subject + "bundleId",
                environment: subject + "environment",
                appAppleId: subject + "appAppleId",
                productId: "data.signedTransactionInfo.productId",
                transactionId: "data.signedTransactionInfo.transactionId"
            )
        }
    }

    /// What it is: `ProofKind.signedTransaction`,
    /// `ProofKind.signedRenewalInfo`, `ProofKind.appTransaction`
    /// or `ProofKind.notification`.
    public let kind: ProofKind
    /// The bundle id it names; always `nil` for a renewal info.
    public let bundleId: String?
    /// The environment it claims; `nil` when it names none.
    public let claimedEnvironment: AppStoreEnvironment?
    /// The environment StoreGate reports: the claim under Apple's root, `Xcode` or `Test` under
    /// an opt-in anchor; `nil` when it claims none.
    public let environment: AppStoreEnvironment?
    /// The app's App Store identifier it names (notifications and app transactions).
    public let appAppleId: Int64?
    /// When it says it was signed: its `signedDate` (an app transaction without one: its
    /// `receiptCreationDate`; a notification without one: its nested data's latest);
    /// `nil` when nothing in it dates it.
    public let signedDate: Date?
    /// Where the signing time came from.
    public let signingTimeSource: SignedDataDetails.SigningTimeSource
    /// The products it names: a transaction's `productId`, a renewal info's `productId` and
    /// `autoRenewProductId`, a notification's nested transaction's; none for an app transaction.
    public let productIds: [String]
    /// The transaction it is (a notification: its nested transaction); `nil` for a renewal
    /// info or an app transaction.
    public let transactionId: String?
    /// A notification's nested signed data, in the order `data.signedTransactionInfo`,
    /// `data.signedRenewalInfo`, `appData.signedAppTransactionInfo`.
    public let nested: [Nested]
    let fields: Fields
    private let clock: @Sendable () -> Date

    /// The verifier's current time.
    public var now: Date { clock() }

    init(
        kind: ProofKind,
        bundleId: String?,
        claimedEnvironment: AppStoreEnvironment?,
        signer: ValidatedSigner,
        appAppleId: Int64? = nil,
        signedDate: Date?,
        signingTimeSource: SignedDataDetails.SigningTimeSource,
        productIds: [String],
        transactionId: String?,
        nested: [Nested] = [],
        fields: Fields,
        clock: @escaping @Sendable () -> Date
    ) {
        self.kind = kind
        self.bundleId = bundleId
        self.claimedEnvironment = claimedEnvironment
        self.environment = claimedEnvironment.map { signer.reportedEnvironment(claimed: $0) }
        self.appAppleId = appAppleId
        self.signedDate = signedDate
        self.signingTimeSource = signingTimeSource
        self.productIds = productIds
        self.transactionId = transactionId
        self.nested = nested
        self.fields = fields
        self.clock = clock
    }

    /// The claimed and reported environments, once the expectations held (the environment
    /// check refuses data that names none).
    ///
    /// - Throws: ``SignedDataError/Code/environmentNotAccepted`` when it names none.
    func environments() throws(SignedDataError) -> (claimed: AppStoreEnvironment, reported: AppStoreEnvironment) {
        guard let claimedEnvironment, let environment else {
            throw SignedDataError(.environmentNotAccepted, field: fields.environment, reason: "the payload names no environment")
        }
        return (claimedEnvironment, environment)
    }
}

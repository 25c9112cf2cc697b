public import StoreGateCore

/// What a verifyReceipt reply must say for StoreGate to believe it: which app, which
/// environments, and which purchase.
public struct VerifyReceiptExpectation: Sendable, Hashable {
    /// The purchase being verified, as the app reported it.
    public struct Purchase: Sendable, Hashable {
        /// The transaction id.
        public var transactionId: String
        /// The product id.
        public var productId: String
        /// How many items were bought.
        public var quantity: Int

        /// Creates a value from its parts.
        public init(transactionId: String, productId: String, quantity: Int = 1) {
            self.transactionId = transactionId
            self.productId = productId
            self.quantity = quantity
        }
    }

    /// The app's bundle id; the reply's must be identical.
    public var bundleId: String
    /// The environments accepted (default: production and sandbox).
    public var environments: Set<AppStoreEnvironment>
    /// The purchase the reply must contain, with the same product and quantity; `nil` only
    /// checks the receipt as a whole (status, app, environment) — see ``wholeReceipt(bundleId:environments:)``.
    public var purchase: Purchase?

    /// Expects a reply for `bundleId` containing `purchase`.
    public init(bundleId: String, purchase: Purchase, environments: Set<AppStoreEnvironment> = AppStoreEnvironment.defaultAccepted) {
        self.init(bundleId: bundleId, optionalPurchase: purchase, environments: environments)
    }

    private init(bundleId: String, optionalPurchase: Purchase?, environments: Set<AppStoreEnvironment>) {
        self.bundleId = bundleId
        self.purchase = optionalPurchase
        self.environments = environments
    }

    /// Expects a genuine receipt of `bundleId` without naming a purchase. Use it only when
    /// something else ties the receipt to the purchase, such as the offline agreement check
    /// (``ReceiptAgreement``): on its own it cannot tell a replayed receipt from a new purchase.
    public static func wholeReceipt(bundleId: String, environments: Set<AppStoreEnvironment> = AppStoreEnvironment.defaultAccepted) -> VerifyReceiptExpectation {
        VerifyReceiptExpectation(bundleId: bundleId, optionalPurchase: nil, environments: environments)
    }
}

public import Foundation
public import StoreGateCore

/// What the caller expects of a StoreKit 2 signed payload, as one value that composes small
/// checks (``SignedDataExpectation``), run in this order:
///
/// 1. ``BundleId``: ``bundleId`` must equal the payload's `bundleId` (transactions, app
///    transactions, notifications; a renewal info carries none and is not checked).
/// 2. ``Environment``: the environment StoreGate reports (see
///    `ValidatedSigner.reportedEnvironment(claimed:)`) must be one of
///    ``environments``: data verified by an opt-in anchor reports `Xcode` or `Test`, never
///    `Production` or `Sandbox`.
/// 3. ``AppAppleId``: a notification or app transaction that claims `Production` names the
///    app by its App Store identifier; it must equal ``appAppleId``, and verifying one without
///    it fails with ``SignedDataError/Code/appAppleIdRequired``. When both sides name one in
///    another environment they must agree too.
/// 4. ``MaxAge``: when ``maxAge`` is set, `signedDate` may be at most this old by the
///    verifier's clock.
/// 5. ``NestedData``: a notification's nested signed data names its bundle id and environment.
/// 6. ``Product`` and 7. ``Transaction``: when ``productId`` and ``transactionId`` are set, the
///    transaction (a notification's nested transaction) must be for this product and be this
///    transaction; a renewal info must name the product as its `productId` or
///    `autoRenewProductId` (and, naming no transaction, fails a ``transactionId``); an app
///    transaction names neither and fails both.
///
/// Then the caller's own checks (``additional``, ``adding(_:)``), in the order added. A check
/// whose field is not set reports "not checked" and never fails.
public struct SignedDataExpectations: Sendable {
    /// The app's bundle identifier, compared exactly.
    public var bundleId: String
    /// The environments accepted; `AppStoreEnvironment.defaultAccepted` by default.
    public var environments: Set<AppStoreEnvironment>
    /// The app's App Store identifier (`appAppleId`); required for production notifications
    /// and app transactions.
    public var appAppleId: Int64?
    /// The oldest `signedDate` accepted, as an age in seconds; `nil` accepts any age.
    public var maxAge: TimeInterval?
    /// The product the proof must be for.
    public var productId: String?
    /// The transaction the proof must be.
    public var transactionId: String?
    /// The caller's own checks, run after the built-in ones in this order.
    public var additional: [any SignedDataExpectation]

    /// Creates expectations.
    ///
    /// - Parameters:
    ///   - bundleId: The app's bundle identifier.
    ///   - environments: The environments accepted.
    ///   - appAppleId: The app's App Store identifier.
    ///   - maxAge: The oldest `signedDate` accepted, in seconds.
    ///   - productId: The product the proof must be for.
    ///   - transactionId: The transaction the proof must be.
    ///   - additional: The caller's own checks, run after the built-in ones.
    public init(
        bundleId: String,
        environments: Set<AppStoreEnvironment> = AppStoreEnvironment.defaultAccepted,
        appAppleId: Int64? = nil,
        maxAge: TimeInterval? = nil,
        productId: String? = nil,
        transactionId: String? = nil,
        additional: [any SignedDataExpectation] = []
    ) {
        self.bundleId = bundleId
        self.environments = environments
        self.appAppleId = appAppleId
        self.maxAge = maxAge
        self.productId = productId
        self.transactionId = transactionId
        self.additional = additional
    }

    /// These expectations with one more check of the caller's, run after every other.
    ///
    /// - Parameter check: The check to add.
    /// - Returns: A copy with `check` appended to ``additional``.
    public func adding(_ check: some SignedDataExpectation) -> SignedDataExpectations {
        var copy = self
        copy.additional.append(check)
        return copy
    }

    /// Every check, in the order the verifier runs them: the built-in ones made from the
    /// fields, then ``additional``.
    public var checks: [any SignedDataExpectation] {
        var checks: [any SignedDataExpectation] = []
        forEachCheck { checks.append($0) }
        return checks
    }

    /// Calls `body` with every check in order (the one place that order is written). The
    /// built-in checks are small enough to travel as existentials without an allocation, so
    /// verifying builds no list.
    func forEachCheck(_ body: (any SignedDataExpectation) -> Void) {
        body(BundleId(bundleId))
        body(Environment(accepted: environments))
        body(AppAppleId(appAppleId))
        body(MaxAge(maxAge))
        body(NestedData())
        body(Product(productId))
        body(Transaction(transactionId))
        for check in additional {
            body(check)
        }
    }
}

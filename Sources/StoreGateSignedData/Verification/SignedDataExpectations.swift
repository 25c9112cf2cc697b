public import Foundation
public import StoreGateCore

/// What the caller expects of a StoreKit 2 signed payload, as one value.
///
/// - ``bundleId`` must equal the payload's `bundleId` (transactions, app transactions,
///   notifications; a renewal info carries none).
/// - The environment StoreGate reports (see ``StoreGateCore/ValidatedSigner/reportedEnvironment(claimed:)``)
///   must be one of ``environments``: data verified by an opt-in anchor reports `Xcode` or
///   `Test`, never `Production` or `Sandbox`.
/// - ``appAppleId``: a notification or app transaction that claims `Production` names the
///   app by its App Store identifier; it must equal this one, and verifying one without it fails with
///   ``SignedDataError/Code/appAppleIdRequired``. When both sides name one in another
///   environment they must agree too.
/// - ``maxAge``: when set, `signedDate` may be at most this old by the verifier's clock.
/// - ``productId`` and ``transactionId``: when set, the transaction (a notification's nested
///   transaction) must be for this product and be this transaction; a renewal info must name
///   the product as its `productId` or `autoRenewProductId` (and, naming no transaction, fails a
///   ``transactionId``); an app transaction names neither and fails both.
public struct SignedDataExpectations: Sendable, Hashable {
    /// The app's bundle identifier, compared exactly.
    public var bundleId: String
    /// The environments accepted; ``StoreGateCore/AppStoreEnvironment/defaultAccepted`` by default.
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

    /// Creates expectations.
    ///
    /// - Parameters:
    ///   - bundleId: The app's bundle identifier.
    ///   - environments: The environments accepted.
    ///   - appAppleId: The app's App Store identifier.
    ///   - maxAge: The oldest `signedDate` accepted, in seconds.
    ///   - productId: The product the proof must be for.
    ///   - transactionId: The transaction the proof must be.
    public init(
        bundleId: String,
        environments: Set<AppStoreEnvironment> = AppStoreEnvironment.defaultAccepted,
        appAppleId: Int64? = nil,
        maxAge: TimeInterval? = nil,
        productId: String? = nil,
        transactionId: String? = nil
    ) {
        self.bundleId = bundleId
        self.environments = environments
        self.appAppleId = appAppleId
        self.maxAge = maxAge
        self.productId = productId
        self.transactionId = transactionId
    }
}

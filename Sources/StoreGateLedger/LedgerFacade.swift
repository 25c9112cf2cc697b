public import Foundation
public import StoreGateCore

/// The familiar calls over any ``Ledger``: record a purchase, is it purchased, how many are
/// left, consume one — with "now" taken from an injected clock.
///
/// ```swift
/// let purchases = LedgerFacade(ledger: ledger)
/// try await purchases.record(proof, for: account)
/// if try await purchases.isPurchased("pro.lifetime", by: account) { … }
/// let coins = try await purchases.count("coins.100", for: account)
/// try await purchases.consume("coins.100", idempotencyKey: requestId, for: account)
/// ```
public struct LedgerFacade: Sendable {
    /// The ledger the calls go to.
    public let ledger: any Ledger
    private let now: @Sendable () -> Date

    /// Wraps a ledger.
    ///
    /// - Parameters:
    ///   - ledger: The store.
    ///   - now: The clock deciding time-dependent answers (subscriptions); the ledger's clock
    ///     (``LedgerConfiguration/now``) by default.
    public init(ledger: any Ledger, now: (@Sendable () -> Date)? = nil) {
        self.ledger = ledger
        self.now = now ?? ledger.configuration.now
    }

    /// Records a verified proof (a receipt, a signed transaction) for `account`.
    ///
    /// - Throws: See ``Ledger/record(_:for:)``.
    @discardableResult
    public func record(_ proof: VerifiedProof, for account: AccountID) async throws(LedgerError) -> RecordOutcome {
        try await ledger.record(proof, for: account)
    }

    /// Takes a verified App Store Server Notification.
    @discardableResult
    public func apply(_ notification: VerifiedNotification) async throws(LedgerError) -> NotificationOutcome {
        try await ledger.apply(notification)
    }

    /// Whether `account` is entitled to `productId` now: an owned non-consumable or
    /// non-renewing subscription, a consumable with units left, or the current product of an
    /// active (or in grace period) subscription.
    public func isPurchased(_ productId: String, by account: AccountID) async throws(LedgerError) -> Bool {
        try await ledger.entitlements(for: account, at: now()).isEntitled(to: productId)
    }

    /// Whether `account`'s subscription in `group` entitles it now.
    public func isSubscribed(inGroup group: String, account: AccountID) async throws(LedgerError) -> Bool {
        try await ledger.entitlements(for: account, at: now()).subscription(inGroup: group)?.isEntitled ?? false
    }

    /// The units of a consumable `account` may still consume.
    public func count(_ productId: String, for account: AccountID) async throws(LedgerError) -> Int {
        try await ledger.balance(of: productId, for: account).available
    }

    /// Consumes units of a consumable; see ``Ledger/consume(_:quantity:idempotencyKey:for:at:)``.
    @discardableResult
    public func consume(
        _ productId: String, quantity: Int = 1, idempotencyKey: String, for account: AccountID
    ) async throws(LedgerError) -> ConsumptionReceipt {
        try await ledger.consume(productId, quantity: quantity, idempotencyKey: idempotencyKey, for: account, at: now())
    }

    /// Everything `account` holds now.
    public func entitlements(for account: AccountID) async throws(LedgerError) -> Entitlements {
        try await ledger.entitlements(for: account, at: now())
    }
}

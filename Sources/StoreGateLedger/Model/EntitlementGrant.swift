public import Foundation

/// An entitlement given to an account by hand (support, a backend), for a time.
///
/// A grant is a fact of the ledger like a purchase: it starts, ends by time without any
/// request (``expiresAt``), or is revoked; both are audited in the account's events.
public struct EntitlementGrant: Sendable, Hashable, Codable {
    /// A stable id (a lowercase UUID).
    public var id: String
    /// The account.
    public var account: AccountID
    /// The entitlement's identifier.
    public var entitlement: String
    /// When it started.
    public var startsAt: Date
    /// When it ends by itself.
    public var expiresAt: Date
    /// Why it was given (for the audit trail; never a secret).
    public var reason: String
    /// Who gave it: the API key's name.
    public var grantedBy: String
    /// The caller's idempotency key.
    public var idempotencyKey: String
    /// When it was revoked, if it was.
    public var revokedAt: Date?
    /// Who revoked it.
    public var revokedBy: String?
    /// Why.
    public var revocationReason: String?

    /// Creates a value.
    public init(
        id: String, account: AccountID, entitlement: String, startsAt: Date, expiresAt: Date, reason: String, grantedBy: String,
        idempotencyKey: String, revokedAt: Date? = nil, revokedBy: String? = nil, revocationReason: String? = nil
    ) {
        self.id = id
        self.account = account
        self.entitlement = entitlement
        self.startsAt = startsAt
        self.expiresAt = expiresAt
        self.reason = reason
        self.grantedBy = grantedBy
        self.idempotencyKey = idempotencyKey
        self.revokedAt = revokedAt
        self.revokedBy = revokedBy
        self.revocationReason = revocationReason
    }

    /// Whether it unlocks its entitlement at `date`: started, not ended, not revoked (compared at
    /// the ledger's millisecond, as its times are stored).
    public func isActive(at date: Date) -> Bool {
        let date = date.ledgerNormalized
        return startsAt <= date && date < expiresAt && (revokedAt.map { $0 > date } ?? true)
    }

    /// When it stops (its end, or its revocation if earlier).
    public var endsAt: Date {
        revokedAt.map { min($0, expiresAt) } ?? expiresAt
    }
}

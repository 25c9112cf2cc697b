/// An account's holdings and its grants, read together: everything an entitlement check
/// derives from (``EntitlementResolver``).
public struct EntitlementFacts: Sendable {
    /// What the account holds.
    public var holdings: Entitlements
    /// Every grant of the account (ended and revoked ones too), newest first.
    public var grants: [EntitlementGrant]

    public init(holdings: Entitlements, grants: [EntitlementGrant]) {
        self.holdings = holdings
        self.grants = grants
    }
}

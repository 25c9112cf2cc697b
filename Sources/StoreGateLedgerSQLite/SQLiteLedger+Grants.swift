public import Foundation
import StoreGateCore
public import StoreGateLedger

/// Entitlement grants (schema 9): a row per grant, its events in the same transaction.
extension SQLiteLedger {
    static let grantColumns = """
        id, account_id, entitlement, starts_at, expires_at, reason, granted_by, idempotency_key, request_digest, \
        revoked_at, revoked_by, revocation_reason
        """

    @discardableResult
    public func grant(_ request: GrantRequest) async throws(LedgerError) -> GrantOutcome {
        let (grant, digest) = try GrantPlanner.grant(request)
        let recordedAt = configuration.now()
        return try await write { connection throws(LedgerError) -> GrantOutcome in
            var stored: (EntitlementGrant, String)?
            try connection.query(
                "SELECT \(Self.grantColumns) FROM ledger_grants WHERE account_id = ? AND idempotency_key = ?",
                [.text(request.account.rawValue), .text(request.idempotencyKey)]
            ) { row throws(LedgerError) in stored = (Self.grant(row), row.text(8)) }
            if let (earlier, earlierDigest) = stored {
                return try GrantPlanner.replay(earlier, storedDigest: earlierDigest, request: request)
            }
            try connection.run(
                """
                INSERT INTO ledger_grants (id, account_id, entitlement, starts_at, expires_at, reason, granted_by, idempotency_key, request_digest)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .text(grant.id), .text(grant.account.rawValue), .text(grant.entitlement), .integer(grant.startsAt.ledgerMilliseconds),
                    .integer(grant.expiresAt.ledgerMilliseconds), .text(grant.reason), .text(grant.grantedBy), .text(grant.idempotencyKey),
                    .text(digest),
                ]
            )
            try Self.appendEvents([GrantPlanner.created(grant, recordedAt: recordedAt)], connection)
            return GrantOutcome(grant: grant, isReplay: false)
        }
    }

    public func recordSupportAction(_ action: SupportAction) async throws(LedgerError) {
        try action.check()
        let event = action.event(recordedAt: configuration.now())
        try await write { connection throws(LedgerError) in try Self.appendEvents([event], connection) }
    }

    @discardableResult
    public func revokeGrant(_ id: String, of account: AccountID, by actor: String, reason: String, at date: Date) async throws(LedgerError) -> EntitlementGrant {
        try GrantPlanner.checkRevocation(id: id, by: actor, reason: reason)
        let recordedAt = configuration.now()
        let date = date.ledgerNormalized
        return try await write { connection throws(LedgerError) -> EntitlementGrant in
            var found: EntitlementGrant?
            try connection.query(
                "SELECT \(Self.grantColumns) FROM ledger_grants WHERE id = ? AND account_id = ?", [.text(id), .text(account.rawValue)]
            ) { row throws(LedgerError) in found = Self.grant(row) }
            guard var grant = found else { throw LedgerError(.grantNotFound, reason: "the account has no grant \(id.prefix(64))") }
            guard grant.revokedAt == nil else { return grant }
            grant.revokedAt = date
            grant.revokedBy = actor
            grant.revocationReason = reason
            try connection.run(
                "UPDATE ledger_grants SET revoked_at = ?, revoked_by = ?, revocation_reason = ? WHERE id = ?",
                [.integer(date.ledgerMilliseconds), .text(actor), .text(reason), .text(id)]
            )
            try Self.appendEvents([GrantPlanner.revoked(grant, recordedAt: recordedAt)], connection)
            return grant
        }
    }

    public func grants(for account: AccountID) async throws(LedgerError) -> [EntitlementGrant] {
        try await perform { () throws(LedgerError) in
            try self.read(snapshot: false) { connection throws(LedgerError) in try Self.loadGrants(connection, account) }
        }
    }

    /// The account's holdings and grants from one snapshot, in one trip to the database thread.
    public func entitlementFacts(for account: AccountID, at date: Date) async throws(LedgerError) -> EntitlementFacts {
        try await metrics.measureQuery { () throws(LedgerError) in
            try await perform { () throws(LedgerError) in try self.holdings(account, at: date) }
        }
    }

    static func loadGrants(_ connection: SQLiteConnection, _ account: AccountID) throws(LedgerError) -> [EntitlementGrant] {
        var grants: [EntitlementGrant] = []
        try connection.query(
            "SELECT \(Self.grantColumns) FROM ledger_grants WHERE account_id = ? ORDER BY starts_at DESC, id DESC", [.text(account.rawValue)]
        ) { row throws(LedgerError) in grants.append(Self.grant(row)) }
        return grants
    }

    /// Appends `grant.expired` for up to `limit` grants that reached their end by `date`
    /// (in the clock's transaction), and marks them announced.
    ///
    /// - Returns: How many there were.
    static func emitEndedGrants(_ connection: SQLiteConnection, at date: Date, limit: Int) throws(LedgerError) -> Int {
        var ended: [EntitlementGrant] = []
        try connection.query(
            """
            SELECT \(grantColumns) FROM ledger_grants WHERE expiry_emitted = 0 AND revoked_at IS NULL AND expires_at <= ?
            ORDER BY expires_at, id LIMIT ?
            """,
            [.integer(date.ledgerMilliseconds), .integer(Int64(limit))]
        ) { row throws(LedgerError) in ended.append(grant(row)) }
        for grant in ended {
            try connection.run("UPDATE ledger_grants SET expiry_emitted = 1 WHERE id = ?", [.text(grant.id)])
        }
        try appendEvents(ended.map { GrantPlanner.expired($0, recordedAt: date) }, connection)
        return ended.count
    }

    static func grant(_ row: SQLiteRow) -> EntitlementGrant {
        EntitlementGrant(
            id: row.text(0), account: AccountID(stored: row.text(1)), entitlement: row.text(2),
            startsAt: Date(ledgerMilliseconds: row.integer(3)), expiresAt: Date(ledgerMilliseconds: row.integer(4)), reason: row.text(5),
            grantedBy: row.text(6), idempotencyKey: row.text(7), revokedAt: row.optionalInteger(9).map(Date.init(ledgerMilliseconds:)),
            revokedBy: row.optionalText(10), revocationReason: row.optionalText(11)
        )
    }
}

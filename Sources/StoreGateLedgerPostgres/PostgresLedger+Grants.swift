public import Foundation
import PostgresNIO
import StoreGateCore
public import StoreGateLedger

/// Entitlement grants (schema 9): a row per grant, its events in the same transaction, after
/// the account's event lock (``PostgresEvents``).
extension PostgresLedger {
    static let grantColumns = """
        id, account_id, entitlement, starts_at, expires_at, reason, granted_by, idempotency_key, request_digest, \
        revoked_at, revoked_by, revocation_reason
        """

    @discardableResult
    public func grant(_ request: GrantRequest) async throws(LedgerError) -> GrantOutcome {
        let (grant, digest) = try GrantPlanner.grant(request)
        let recordedAt = configuration.now()
        let logger = self.logger
        let outcome = try await transaction { connection -> Result<GrantOutcome, LedgerError> in
            // The account's lock first: its events keep their order, and a retry with the same
            // key waits for the first call and finds its grant.
            try await Self.lockAccount(request.account, connection, logger: logger)
            let stored = try await Self.rows(
                connection, "SELECT \(Self.grantColumns) FROM ledger_grants WHERE account_id = $1 AND idempotency_key = $2",
                [.text(request.account.rawValue), .text(request.idempotencyKey)], logger: logger
            ).first
            if let stored {
                let earlier = try Self.grant(stored)
                let earlierDigest = try stored.text(8)
                do throws(LedgerError) {
                    return .success(try GrantPlanner.replay(earlier, storedDigest: earlierDigest, request: request))
                } catch {
                    return .failure(error)
                }
            }
            _ = try await Self.rows(
                connection,
                """
                INSERT INTO ledger_grants (id, account_id, entitlement, starts_at, expires_at, reason, granted_by, idempotency_key, request_digest)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
                """,
                [
                    .text(grant.id), .text(grant.account.rawValue), .text(grant.entitlement), .integer(grant.startsAt.ledgerMilliseconds),
                    .integer(grant.expiresAt.ledgerMilliseconds), .text(grant.reason), .text(grant.grantedBy), .text(grant.idempotencyKey),
                    .text(digest),
                ],
                logger: logger
            )
            try await Self.appendEvents([GrantPlanner.created(grant, recordedAt: recordedAt)], at: recordedAt, connection, logger: logger)
            return .success(GrantOutcome(grant: grant, isReplay: false))
        }
        return try outcome.get()
    }

    public func recordSupportAction(_ action: SupportAction) async throws(LedgerError) {
        try action.check()
        let recordedAt = configuration.now()
        let event = action.event(recordedAt: recordedAt)
        let logger = self.logger
        let outcome = try await transaction { connection -> Result<Void, LedgerError> in
            try await Self.lockAccount(action.account, connection, logger: logger)
            try await Self.appendEvents([event], at: recordedAt, connection, logger: logger)
            return .success(())
        }
        try outcome.get()
    }

    @discardableResult
    public func revokeGrant(_ id: String, of account: AccountID, by actor: String, reason: String, at date: Date) async throws(LedgerError) -> EntitlementGrant {
        try GrantPlanner.checkRevocation(id: id, by: actor, reason: reason)
        let recordedAt = configuration.now()
        let date = date.ledgerNormalized
        let logger = self.logger
        let outcome = try await transaction { connection -> Result<EntitlementGrant, LedgerError> in
            try await Self.lockAccount(account, connection, logger: logger)
            guard let row = try await Self.rows(
                connection, "SELECT \(Self.grantColumns) FROM ledger_grants WHERE id = $1 AND account_id = $2 FOR UPDATE",
                [.text(id), .text(account.rawValue)], logger: logger
            ).first else {
                return .failure(LedgerError(.grantNotFound, reason: "the account has no grant \(id.prefix(64))"))
            }
            var grant = try Self.grant(row)
            guard grant.revokedAt == nil else { return .success(grant) }
            grant.revokedAt = date
            grant.revokedBy = actor
            grant.revocationReason = reason
            _ = try await Self.rows(
                connection, "UPDATE ledger_grants SET revoked_at = $1, revoked_by = $2, revocation_reason = $3 WHERE id = $4",
                [.integer(date.ledgerMilliseconds), .text(actor), .text(reason), .text(id)], logger: logger
            )
            try await Self.appendEvents([GrantPlanner.revoked(grant, recordedAt: recordedAt)], at: recordedAt, connection, logger: logger)
            return .success(grant)
        }
        return try outcome.get()
    }

    public func grants(for account: AccountID) async throws(LedgerError) -> [EntitlementGrant] {
        let logger = self.logger
        return try await withConnection { connection in
            try await Self.rows(
                connection, "SELECT \(Self.grantColumns) FROM ledger_grants WHERE account_id = $1 ORDER BY starts_at DESC, id DESC",
                [.text(account.rawValue)], logger: logger
            ).map(Self.grant)
        }
    }

    /// Appends `grant.expired` for up to `limit` grants that reached their end by `date`, and
    /// marks them announced; another instance's clock skips the ones this one locked.
    ///
    /// - Returns: How many there were.
    func emitEndedGrants(at date: Date, limit: Int) async throws(LedgerError) -> Int {
        let logger = self.logger
        let recordedAt = date
        return try await transaction { connection in
            let ended = try await Self.rows(
                connection,
                """
                SELECT \(Self.grantColumns) FROM ledger_grants WHERE NOT expiry_emitted AND revoked_at IS NULL AND expires_at <= $1
                ORDER BY expires_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
                """,
                [.integer(date.ledgerMilliseconds), .integer(Int64(limit))], logger: logger
            ).map(Self.grant)
            guard !ended.isEmpty else { return 0 }
            for account in Set(ended.map(\.account)).sorted(by: { $0.rawValue < $1.rawValue }) {
                try await Self.lockAccount(account, connection, logger: logger)
            }
            _ = try await Self.rows(
                connection, "UPDATE ledger_grants SET expiry_emitted = true WHERE id = ANY($1::text[])",
                [.texts(ended.map(\.id))], logger: logger
            )
            try await Self.appendEvents(ended.map { GrantPlanner.expired($0, recordedAt: recordedAt) }, at: recordedAt, connection, logger: logger)
            return ended.count
        }
    }

    /// Takes the account's event lock for the rest of the transaction.
    static func lockAccount(_ account: AccountID, _ connection: PostgresConnection, logger: Logger) async throws {
        _ = try await rows(
            connection, "SELECT pg_advisory_xact_lock(\(PostgresEvents.accountLockClass), hashtext($1))", [.text(account.rawValue)], logger: logger
        )
    }

    static func grant(_ row: PostgresRandomAccessRow) throws -> EntitlementGrant {
        EntitlementGrant(
            id: try row.text(0), account: AccountID(stored: try row.text(1)), entitlement: try row.text(2),
            startsAt: Date(ledgerMilliseconds: try row.integer(3)), expiresAt: Date(ledgerMilliseconds: try row.integer(4)), reason: try row.text(5),
            grantedBy: try row.text(6), idempotencyKey: try row.text(7), revokedAt: try row.optionalDate(9), revokedBy: try row.optionalText(10),
            revocationReason: try row.optionalText(11)
        )
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import Logging
import StoreGateCore
import StoreGateLedger

/// `POST /v1/accounts/{account}/grants` (`GrantRequest`).
struct GrantRequestBody: JSONRequestBody {
    let entitlement: String
    let term: GrantRequest.Term
    let reason: String
    let idempotencyKey: String

    init(_ object: RequestObject) throws(APIError) {
        try object.rejectUnknownMembers(["entitlement", "duration", "until", "reason", "idempotencyKey"])
        entitlement = try object.string("entitlement")
        reason = try object.string("reason")
        idempotencyKey = try object.string("idempotencyKey")
        switch (try object.optionalString("duration"), try object.optionalString("until")) {
        case (let duration?, nil):
            guard let seconds = ISODuration.seconds(duration) else {
                throw APIError.badField("duration", .invalidField, "'duration' is an ISO 8601 duration in weeks, days, hours, minutes or seconds, such as P7D or PT12H")
            }
            term = .duration(.seconds(seconds))
        case (nil, let until?):
            guard let date = ISODuration.date(until) else {
                throw APIError.badField("until", .invalidField, "'until' is an RFC 3339 time such as 2026-12-31T23:59:59Z")
            }
            term = .until(date)
        case (nil, nil):
            throw APIError.badField("duration", .missingField, "a grant needs 'duration' or 'until'")
        case (.some, .some):
            throw APIError.badField("until", .invalidField, "a grant takes 'duration' or 'until', not both")
        }
    }
}

/// `POST /v1/accounts/{account}/grants/{grant}/revoke` (`GrantRevocation`).
struct GrantRevocationBody: JSONRequestBody {
    let reason: String

    init(_ object: RequestObject) throws(APIError) {
        try object.rejectUnknownMembers(["reason"])
        reason = try object.string("reason")
    }
}

/// A grant on the wire (`Grant`).
struct GrantReply: JSONWritable {
    let grant: EntitlementGrant
    let now: Date

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("id", grant.id)
            json.member("account", grant.account.rawValue)
            json.member("entitlement", grant.entitlement)
            json.member("isActive", grant.isActive(at: now))
            json.member("startsAt", grant.startsAt)
            json.member("expiresAt", grant.expiresAt)
            json.member("reason", grant.reason)
            json.member("grantedBy", grant.grantedBy)
            json.member("idempotencyKey", grant.idempotencyKey)
            json.member("revokedAt", grant.revokedAt)
            json.member("revokedBy", grant.revokedBy)
            json.member("revocationReason", grant.revocationReason)
        }
    }
}

/// A grant call's reply (`GrantOutcome`).
struct GrantOutcomeReply: JSONWritable {
    let outcome: GrantOutcome
    let now: Date

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.key("grant")
            GrantReply(grant: outcome.grant, now: now).write(to: &json)
            json.member("isReplay", outcome.isReplay)
        }
    }
}

/// An account's grants (`GrantList`).
struct GrantListReply: JSONWritable {
    let account: String
    let grants: [GrantReply]

    func write(to json: inout JSONWriter) {
        json.object { json in
            json.member("account", account)
            json.member("grants", grants)
        }
    }
}

extension Endpoints {
    /// Grants an entitlement for a time: 201 with the grant, 200 with the first one for a retry.
    @Sendable func createGrant(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let account = try Self.account(try Self.pathParameter("account", context), field: "account")
        let body = try await decode(GrantRequestBody.self, request)
        guard catalog.current.entitlements[body.entitlement] != nil else {
            throw APIError(.unprocessableContent, .unknownEntitlement, "the catalog defines no entitlement '\(body.entitlement.prefix(64))'", field: "entitlement")
        }
        let outcome: GrantOutcome
        do throws(LedgerError) {
            outcome = try await ledger.grant(GrantRequest(
                account: account, entitlement: body.entitlement, term: body.term, reason: body.reason,
                grantedBy: context.apiKeyName ?? "unknown", idempotencyKey: body.idempotencyKey, startsAt: now()
            ))
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
        context.logger.info("entitlement granted", metadata: [
            "account": "\(account.rawValue)", "entitlement": "\(outcome.grant.entitlement)", "grant.id": "\(outcome.grant.id)", "replay": "\(outcome.isReplay)",
        ])
        return JSONReply.response(GrantOutcomeReply(outcome: outcome, now: now()), status: outcome.isReplay ? .ok : .created)
    }

    /// The account's grants, newest first.
    @Sendable func listGrants(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let account = try Self.account(try Self.pathParameter("account", context), field: "account")
        let grants = try await grants(account, context: context)
        let now = now()
        return JSONReply.response(GrantListReply(account: account.rawValue, grants: grants.map { GrantReply(grant: $0, now: now) }))
    }

    /// Revokes a grant now (again: the first revocation stands).
    @Sendable func revokeGrant(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let account = try Self.account(try Self.pathParameter("account", context), field: "account")
        let id = try Self.pathParameter("grant", context)
        let body = try await decode(GrantRevocationBody.self, request)
        let grant: EntitlementGrant
        do throws(LedgerError) {
            grant = try await ledger.revokeGrant(id, of: account, by: context.apiKeyName ?? "unknown", reason: body.reason, at: now())
        } catch where error.code == .grantNotFound {
            throw APIError(.notFound, .grantNotFound, error.reason, field: "grant")
        } catch {
            throw APIError.ledger(error, argumentStatus: .badRequest, logger: context.logger)
        }
        context.logger.info("grant revoked", metadata: ["account": "\(account.rawValue)", "grant.id": "\(grant.id)"])
        return JSONReply.response(GrantReply(grant: grant, now: now()))
    }

    /// The account's grants, or the ledger's failure as a reply.
    func grants(_ account: AccountID, context: StoreGateRequestContext) async throws(APIError) -> [EntitlementGrant] {
        do throws(LedgerError) {
            return try await ledger.grants(for: account)
        } catch {
            throw APIError.ledger(error, logger: context.logger)
        }
    }

    /// Grants given and revoked by hand.
    var grantRoutes: [Route] {
        [
            Route(.get, "/v1/accounts/:account/grants", .apiKey(.grantsManage), listGrants),
            Route(.post, "/v1/accounts/:account/grants", .apiKey(.grantsManage), createGrant),
            Route(.post, "/v1/accounts/:account/grants/:grant/revoke", .apiKey(.grantsManage), revokeGrant),
        ]
    }
}

public import Foundation
import Crypto
import StoreGateCore

/// What a caller asks for when it grants an entitlement (``Ledger/grant(_:)``).
public struct GrantRequest: Sendable, Hashable {
    /// How long the grant lasts.
    public enum Term: Sendable, Hashable {
        /// From its start, for this long.
        case duration(Duration)
        /// From its start until this date.
        case until(Date)
    }

    /// The account.
    public var account: AccountID
    /// The entitlement's identifier.
    public var entitlement: String
    /// How long it lasts.
    public var term: Term
    /// Why (1...512 bytes; audited, never a secret).
    public var reason: String
    /// Who grants it: the API key's name (1...128 bytes).
    public var grantedBy: String
    /// The caller's key: a retry with the same key and the same request grants nothing more.
    public var idempotencyKey: String
    /// When it starts (the injected clock's now).
    public var startsAt: Date

    /// Creates a request.
    public init(account: AccountID, entitlement: String, term: Term, reason: String, grantedBy: String, idempotencyKey: String, startsAt: Date) {
        self.account = account
        self.entitlement = entitlement
        self.term = term
        self.reason = reason
        self.grantedBy = grantedBy
        self.idempotencyKey = idempotencyKey
        self.startsAt = startsAt
    }
}

/// What a grant call did.
public struct GrantOutcome: Sendable, Hashable {
    /// The grant (the first call's, for a replay).
    public var grant: EntitlementGrant
    /// Whether an earlier call with the same key already granted it.
    public var isReplay: Bool

    public init(grant: EntitlementGrant, isReplay: Bool) {
        self.grant = grant
        self.isReplay = isReplay
    }
}

/// Checks grant requests and builds their rows and events: shared by every backend, so each
/// stores and emits exactly the same.
package enum GrantPlanner {
    /// The longest grant: 100 years.
    package static let maximumTerm: TimeInterval = 100 * 366 * 86_400

    /// A new grant from a checked request, with the digest a replay is compared by.
    package static func grant(_ request: GrantRequest) throws(LedgerError) -> (grant: EntitlementGrant, digest: String) {
        guard ProductCatalog.isEntitlementIdentifier(request.entitlement) else {
            throw LedgerError(.invalidArgument, reason: "an entitlement identifier has 1...\(ProductCatalog.maximumEntitlementLength) characters from a-z A-Z 0-9 . _ -")
        }
        try checkText(request.reason, name: "a grant's reason", limit: 512)
        try checkText(request.grantedBy, name: "a grant's actor", limit: 128)
        guard !request.idempotencyKey.isEmpty, request.idempotencyKey.utf8.count <= LedgerPlanner.maximumIdentifierLength else {
            throw LedgerError(.invalidArgument, reason: "an idempotency key has 1...\(LedgerPlanner.maximumIdentifierLength) bytes")
        }
        let start = request.startsAt.ledgerNormalized
        let end: Date
        switch request.term {
        case .duration(let duration):
            let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
            guard seconds >= 1, seconds <= maximumTerm else {
                throw LedgerError(.invalidArgument, reason: "a grant lasts 1 second to 100 years")
            }
            end = start.addingTimeInterval(seconds).ledgerNormalized
        case .until(let date):
            let until = date.ledgerNormalized
            guard until > start, until.timeIntervalSince(start) <= maximumTerm else {
                throw LedgerError(.invalidArgument, reason: "a grant ends after it starts, within 100 years")
            }
            end = until
        }
        let grant = EntitlementGrant(
            id: UUID().uuidString.lowercased(), account: request.account, entitlement: request.entitlement, startsAt: start, expiresAt: end,
            reason: request.reason, grantedBy: request.grantedBy, idempotencyKey: request.idempotencyKey
        )
        return (grant, digest(request))
    }

    /// The digest of what a request asks (entitlement, term, reason): a retry with the same key
    /// must ask the same.
    package static func digest(_ request: GrantRequest) -> String {
        let term: String
        switch request.term {
        case .duration(let duration): term = "duration:\(duration.components.seconds)"
        case .until(let date): term = "until:\(date.ledgerMilliseconds)"
        }
        let text = [request.entitlement, term, request.reason].joined(separator: "\n")
        return Hex.encode(Array(SHA256.hash(data: Array(text.utf8))))
    }

    /// The answer to a request whose key was used before: the stored grant when it asked the
    /// same, ``LedgerError/Code/idempotencyKeyReused`` otherwise.
    package static func replay(_ stored: EntitlementGrant, storedDigest: String, request: GrantRequest) throws(LedgerError) -> GrantOutcome {
        guard storedDigest == digest(request) else {
            throw LedgerError(.idempotencyKeyReused, reason: "the idempotency key was used for another grant")
        }
        return GrantOutcome(grant: stored, isReplay: true)
    }

    /// Checks a revocation's arguments.
    package static func checkRevocation(id: String, by actor: String, reason: String) throws(LedgerError) {
        guard !id.isEmpty, id.utf8.count <= 64 else { throw LedgerError(.invalidArgument, reason: "a grant id has 1...64 bytes") }
        try checkText(reason, name: "a revocation's reason", limit: 512)
        try checkText(actor, name: "a revocation's actor", limit: 128)
    }

    /// The event of a new grant.
    package static func created(_ grant: EntitlementGrant, recordedAt: Date) -> LedgerEvent {
        event(.grantCreated, grant, occurredAt: grant.startsAt, recordedAt: recordedAt, source: LedgerEvent.grantSource, reason: grant.reason, actor: grant.grantedBy)
    }

    /// The event of a revocation.
    package static func revoked(_ grant: EntitlementGrant, recordedAt: Date) -> LedgerEvent {
        event(
            .grantRevoked, grant, occurredAt: grant.revokedAt ?? recordedAt, recordedAt: recordedAt, source: LedgerEvent.grantSource,
            reason: grant.revocationReason ?? "", actor: grant.revokedBy
        )
    }

    /// The event of a grant reaching its end (appended by the subscription clock).
    package static func expired(_ grant: EntitlementGrant, recordedAt: Date) -> LedgerEvent {
        event(.grantExpired, grant, occurredAt: grant.expiresAt, recordedAt: recordedAt, source: LedgerEvent.timeSource, reason: grant.reason, actor: nil)
    }

    private static func event(
        _ type: LedgerEvent.EventType, _ grant: EntitlementGrant, occurredAt: Date, recordedAt: Date, source: String, reason: String, actor: String?
    ) -> LedgerEvent {
        LedgerEvent(
            id: EventPlanner.newID(), sequence: 0, type: type, account: grant.account, productId: grant.entitlement, environment: nil,
            transactionId: nil, originalTransactionId: nil, occurredAt: occurredAt, recordedAt: recordedAt.ledgerNormalized, source: source,
            entitlement: nil,
            grant: LedgerEvent.Grant(id: grant.id, entitlement: grant.entitlement, startsAt: grant.startsAt, expiresAt: grant.expiresAt, reason: reason, actor: actor)
        )
    }

    private static func checkText(_ text: String, name: String, limit: Int) throws(LedgerError) {
        guard !text.isEmpty, text.utf8.count <= limit, !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw LedgerError(.invalidArgument, reason: "\(name) has 1...\(limit) bytes without control characters")
        }
    }
}

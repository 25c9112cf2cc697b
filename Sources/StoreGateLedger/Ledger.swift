public import Foundation
public import StoreGateCore

/// The entitlement store: records verified purchases and answers what each account owns.
///
/// Three backends implement it with the same behaviour, checked by one contract suite:
/// ``InMemoryLedger`` (tests), `SQLiteLedger` (the embedded default) and `PostgresLedger`
/// (several service instances sharing one database).
///
/// ## Recording
/// Only verified proofs and notifications are accepted (their types have `package`
/// initializers). A transaction is identified by (environment, transaction id) and recorded
/// once; recording it again changes nothing unless a later observation (by Apple's signing
/// date) changes its expiry, revocation or upgrade. Transactions sharing an original
/// transaction id form a *family* (renewals, restores, upgrades): the first account to record
/// any of them owns the family, so renewals accrue to that account, and another account's
/// attempt is refused with ``LedgerError/Code/ownedByAnotherAccount`` with nothing written
/// (receipt sharing, replays) — or, under ``TransferPolicy/transfer``, moves the family to that
/// account (``LedgerEvent/EventType/purchaseTransferred`` on both). A transaction carrying an
/// `appAccountToken` is recorded only for the account whose token it is
/// (``AppAccountTokenPolicy``), and a family holding one never moves to another account.
/// Support moves a family by hand with ``transfer(_:)``.
///
/// ## Changes from Apple
/// Refunds and revocations (receipt `cancellation_date`, JWS `revocationDate`, `REFUND` and
/// `REVOKE` notifications) revoke the transaction they cover. Notifications are taken once by
/// `notificationUUID` and ordered by their signing date, so duplicates and any delivery order
/// end in the same state. A notification about a family no account owns yet waits; the first
/// account recording the family's proof claims it.
///
/// ## Consumables
/// ``consume(_:quantity:idempotencyKey:for:at:)`` is atomic in the store (not in process
/// memory), never takes a balance below zero, and replays an earlier call with the same key.
/// A refund of units already consumed shows as ``ConsumableBalance/refundDebt``.
///
/// ## Browsing
/// The console's reads (an account's timeline, a search by any identifier, activity per
/// day) are ``LedgerBrowsing``'s.
///
/// ## Background work
/// Every backend also keeps the webhook deliveries of its events (``EventDeliveryStore``) and
/// the leased states of background jobs (``LeasedStateStore``) in its own database, so the
/// service's workers take any ledger as it is.
///
/// All errors thrown are ``LedgerError``.
public protocol Ledger: LedgerBrowsing, EventDeliveryStore, LeasedStateStore, WebhookEndpointStore, APIKeyRecordStore, TransactionScanning, AnalyticsStore {
    /// The backend's name: `memory`, `sqlite` or `postgres`.
    var backend: String { get }

    /// The configuration the ledger was opened with.
    var configuration: LedgerConfiguration { get }

    /// Records every transaction of a verified proof (and its renewal info) for `account`,
    /// all or nothing.
    ///
    /// - Parameters:
    ///   - proof: A proof StoreGate verified.
    ///   - account: The customer account redeeming it.
    /// - Returns: Which transactions were new, changed or already recorded.
    /// - Throws: ``LedgerError/Code/ownedByAnotherAccount``, ``LedgerError/Code/appAccountTokenMismatch``,
    ///   ``LedgerError/Code/environmentMismatch``, ``LedgerError/Code/inconsistentTransaction``,
    ///   ``LedgerError/Code/invalidArgument``, or a storage error.
    @discardableResult
    func record(_ proof: VerifiedProof, for account: AccountID) async throws(LedgerError) -> RecordOutcome

    /// Takes a verified App Store Server Notification: once per `notificationUUID`, its
    /// transaction and renewal info ordered by the notification's signing date.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument``, ``LedgerError/Code/inconsistentTransaction``,
    ///   or a storage error.
    @discardableResult
    func apply(_ notification: VerifiedNotification) async throws(LedgerError) -> NotificationOutcome

    /// Everything `account` holds at `date` (pass the injected clock's now).
    func entitlements(for account: AccountID, at date: Date) async throws(LedgerError) -> Entitlements

    /// ``entitlements(for:at:)`` and ``grants(for:)`` together: what the one-entitlement check
    /// on every app request reads. PostgreSQL answers it in one round trip; the default reads
    /// one and then the other.
    func entitlementFacts(for account: AccountID, at date: Date) async throws(LedgerError) -> EntitlementFacts

    /// The balance of one consumable for `account` (zero when it has none).
    func balance(of productId: String, for account: AccountID) async throws(LedgerError) -> ConsumableBalance

    /// Consumes `quantity` units of a consumable, atomically.
    ///
    /// A second call with the same `idempotencyKey` (per account) consumes nothing and returns
    /// the first call's receipt with `isReplay` set.
    ///
    /// - Parameters:
    ///   - productId: The consumable.
    ///   - quantity: Units to consume, at least 1.
    ///   - idempotencyKey: The caller's key for this consumption (1...256 bytes).
    ///   - account: Whose balance.
    ///   - date: When it happens (the injected clock's now).
    /// - Throws: ``LedgerError/Code/insufficientBalance`` (nothing consumed; `available` set),
    ///   ``LedgerError/Code/idempotencyKeyReused`` (the key was used for another product or
    ///   quantity), ``LedgerError/Code/invalidArgument``, or a storage error.
    @discardableResult
    func consume(
        _ productId: String, quantity: Int, idempotencyKey: String, for account: AccountID, at date: Date
    ) async throws(LedgerError) -> ConsumptionReceipt

    /// Grants an entitlement to an account for a time, with its `grant.created` event, once
    /// per (account, idempotency key): a retry with the same key and request returns the first
    /// grant with `isReplay` set.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument`` (identifier, term, reason, actor, key),
    ///   ``LedgerError/Code/idempotencyKeyReused`` (the key asked for another grant), or a
    ///   storage error.
    @discardableResult
    func grant(_ request: GrantRequest) async throws(LedgerError) -> GrantOutcome

    /// Revokes an account's grant at `date`, with its `grant.revoked` event; revoking one that
    /// was already revoked changes nothing and returns it.
    ///
    /// - Throws: ``LedgerError/Code/grantNotFound`` (no such grant of this account),
    ///   ``LedgerError/Code/invalidArgument``, or a storage error.
    @discardableResult
    func revokeGrant(_ id: String, of account: AccountID, by actor: String, reason: String, at date: Date) async throws(LedgerError) -> EntitlementGrant

    /// Keeps what support did at Apple for an account (``SupportAction``) as its
    /// `subscription.extended` event, in the account's order.
    ///
    /// - Throws: ``LedgerError/Code/invalidArgument``, or a storage error.
    func recordSupportAction(_ action: SupportAction) async throws(LedgerError)

    /// Every grant of `account` (ended and revoked ones too), newest first.
    func grants(for account: AccountID) async throws(LedgerError) -> [EntitlementGrant]

    /// Moves a purchase family to an account by hand (support), whatever the
    /// ``LedgerConfiguration/transferPolicy``: every transaction of the family, its renewals and
    /// its consumable units (units the old owner already used leave with it as used, so the new
    /// owner never spends them; `docs/transfers.md`), in one transaction, with a `purchase.transferred` event on both
    /// accounts naming the actor and the reason. Moving a family to the account that owns it
    /// changes nothing and says so (``TransferOutcome/isMoved``).
    ///
    /// - Throws: ``LedgerError/Code/purchaseNotFound`` (no account owns the family),
    ///   ``LedgerError/Code/appAccountTokenMismatch`` (a transaction of the family is bound to an
    ///   `appAccountToken` that is not the account's: it never moves there),
    ///   ``LedgerError/Code/invalidArgument`` (identifier, reason, actor), or a storage error.
    @discardableResult
    func transfer(_ request: TransferRequest) async throws(LedgerError) -> TransferOutcome

    /// What was last announced of each account's entitlements (accounts never announced are
    /// absent).
    ///
    /// - Throws: ``LedgerError/Code/corruptState`` for a snapshot that does not decode, or a
    ///   storage error.
    func entitlementSnapshots(for accounts: [AccountID]) async throws(LedgerError) -> [AccountID: EntitlementSnapshot]

    /// Accounts whose entitlements change by time alone at or before `date` (a snapshot's
    /// ``EntitlementSnapshot/nextCheckAt``), earliest first, at most `limit`.
    func accountsWithEntitlementsDue(at date: Date, limit: Int) async throws(LedgerError) -> [AccountID]

    /// Commits an entitlement tracker's batch in one transaction: stores the snapshots, appends
    /// the events, and saves the tracker's place — only while `holder` still holds the lease on
    /// the place (``LeasedStateStore``): a tracker that lost its lease commits nothing, so each
    /// change is announced once however many instances track.
    ///
    /// - Returns: Whether it was committed.
    func commitEntitlementChanges(_ batch: EntitlementChangeBatch, holder: String, now: Date, lease: Duration) async throws(LedgerError) -> Bool

    /// The outbox: events stored after `sequence`, in sequence order, at most `limit`.
    ///
    /// Every change the ledger makes appends its ``LedgerEvent``s in the same database
    /// transaction (see ``LedgerEvent``); sequences grow in commit order, so a reader passing
    /// the last sequence it saw (0 at first) reads each event once, in order, across restarts
    /// and instances.
    ///
    /// - Parameters:
    ///   - sequence: The last sequence already read; 0 reads from the start.
    ///   - limit: At most this many events, 1...``maximumEventPage``.
    /// - Throws: ``LedgerError/Code/invalidArgument`` for a negative sequence or a limit out
    ///   of range; ``LedgerError/Code/cursorExpired`` for a sequence other than 0 below the
    ///   oldest events retention kept (events after it were deleted); or a storage error.
    func events(after sequence: Int64, limit: Int) async throws(LedgerError) -> [LedgerEvent]

    /// The newest event's sequence (0 when the stream is empty): where a reader that follows
    /// only what comes next starts. One index probe, whatever the stream's length.
    func lastEventSequence() async throws(LedgerError) -> Int64

    /// Deletes up to `limit` of the oldest events, in sequence order, while they were recorded
    /// before `cutoff` — stopping before the newest event (its sequence must never be reused),
    /// before one a webhook endpoint has not delivered yet (a pending or failed delivery) and
    /// after the last one an endpoint has fanned out: the stream loses its oldest events and
    /// no other, and nothing still owed to an endpoint. The deliveries of the deleted events
    /// (all delivered) go with them. Afterwards ``events(after:limit:)`` answers
    /// ``LedgerError/Code/cursorExpired`` for a cursor below the deleted ones.
    ///
    /// - Parameters:
    ///   - cutoff: Events recorded at or after this are kept.
    ///   - limit: At most this many events, 1...100000.
    /// - Returns: How many were deleted, and the sequence the stream is now deleted through.
    @discardableResult
    func pruneEvents(recordedBefore cutoff: Date, limit: Int) async throws(LedgerError) -> EventPruning

    /// Appends the changes that time alone made up to `date` — a subscription period or grace
    /// period ending (`SubscriptionClock`), a grant reaching its end (`grant.expired`) — for
    /// at most `limit` families and at most `limit` grants whose moment has passed, in one
    /// transaction. Each is appended once, however many instances call this at once.
    ///
    /// - Parameters:
    ///   - date: Now (the injected clock's).
    ///   - limit: At most this many families (and grants), 1...10000.
    /// - Returns: How many families and grants were due; fewer than `limit` means none is left.
    @discardableResult
    func emitElapsedTransitions(until date: Date, limit: Int) async throws(LedgerError) -> Int

    /// The recorded state of one transaction, or `nil` when it was never recorded.
    func transaction(_ transactionId: String, in environment: AppStoreEnvironment) async throws(LedgerError) -> RecordedTransaction?

    /// The raw proof stored under `digest`, decrypted; `nil` when none is stored (unknown, or
    /// recorded while no encryption key was configured).
    ///
    /// - Throws: ``LedgerError/Code/unknownEncryptionKey`` or ``LedgerError/Code/decryptionFailed``.
    func storedProof(_ digest: ProofDigest) async throws(LedgerError) -> [UInt8]?

    /// Checks the store: the database's own check (SQLite `PRAGMA integrity_check`) and the
    /// ledger's invariants (every transaction owned by its family's owner, counters equal to
    /// the transactions and consumptions behind them).
    func checkIntegrity() async throws(LedgerError) -> LedgerIntegrityReport

    /// Checks that the store answers and can take writes (readiness): SQLite writes a
    /// header field (so a full disk or a read-only file shows), PostgreSQL answers a query.
    ///
    /// - Throws: The storage error that a request would meet.
    func checkHealth() async throws(LedgerError)

    /// Releases the ledger's resources; later calls throw ``LedgerError/Code/closed``.
    func close() async
}

/// The largest page ``Ledger/events(after:limit:)`` answers.
public let maximumEventPage = 1000

/// What one ``Ledger/pruneEvents(recordedBefore:limit:)`` call did.
public struct EventPruning: Sendable, Hashable {
    /// Events deleted by this call.
    public var deleted: Int
    /// Every event up to this sequence is deleted (0 when none ever was); a cursor below it
    /// has expired.
    public var prunedThrough: Int64

    public init(deleted: Int, prunedThrough: Int64) {
        self.deleted = deleted
        self.prunedThrough = prunedThrough
    }
}

extension LedgerPlanner {
    /// Validates the arguments of an events read.
    package static func checkEventPage(after sequence: Int64, limit: Int) throws(LedgerError) {
        guard sequence >= 0 else { throw LedgerError(.invalidArgument, reason: "an event sequence is at least 0, got \(sequence)") }
        guard (1...maximumEventPage).contains(limit) else {
            throw LedgerError(.invalidArgument, reason: "an events page holds 1...\(maximumEventPage) events, got \(limit)")
        }
    }

    /// Refuses a cursor below the events retention deleted (0 reads from the oldest kept).
    package static func checkCursor(_ sequence: Int64, prunedThrough: Int64) throws(LedgerError) {
        guard sequence == 0 || sequence >= prunedThrough else {
            throw LedgerError(
                .cursorExpired,
                reason: "events after \(sequence) through \(prunedThrough) were deleted by retention; read again from 0 (the oldest kept) and reconcile"
            )
        }
    }

    /// Validates the arguments of ``Ledger/pruneEvents(recordedBefore:limit:)``.
    package static func checkPruneLimit(_ limit: Int) throws(LedgerError) {
        guard (1...100_000).contains(limit) else {
            throw LedgerError(.invalidArgument, reason: "a pruning batch holds 1...100000 events, got \(limit)")
        }
    }
}

extension Ledger {
    public func entitlementFacts(for account: AccountID, at date: Date) async throws(LedgerError) -> EntitlementFacts {
        EntitlementFacts(holdings: try await entitlements(for: account, at: date), grants: try await grants(for: account))
    }

    /// A read the store must answer: the lookup of a transaction that does not exist.
    public func checkHealth() async throws(LedgerError) {
        _ = try await transaction("storegate-health-probe", in: .production)
    }

    /// Whether stored raw proofs are encrypted (otherwise none are stored).
    public var isEncryptionConfigured: Bool { configuration.isEncryptionConfigured }

    /// Warnings to log at start-up (no encryption key).
    public var startupWarnings: [String] { configuration.startupWarnings }

    /// The newest event's sequence by paging through the stream: for a conformance of your own
    /// that has no cheaper way; every StoreGate backend answers with one index probe.
    public func lastEventSequence() async throws(LedgerError) -> Int64 {
        var last: Int64 = 0
        while let tail = try await events(after: last, limit: maximumEventPage).last { last = tail.sequence }
        return last
    }
}

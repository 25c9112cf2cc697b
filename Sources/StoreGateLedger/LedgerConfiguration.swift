public import Logging

public import Foundation

/// What every ledger backend is configured with: the product catalog, the account-token
/// policy, the transfer policy, encryption at rest, a logger and a clock.
public struct LedgerConfiguration: Sendable {
    /// Product types and subscription groups for proofs that do not state them.
    public var catalog: ProductCatalog
    /// How an account maps to the `appAccountToken` of its purchases.
    public var accountTokenPolicy: AppAccountTokenPolicy
    /// What happens when an account presents a purchase another account owns.
    public var transferPolicy: TransferPolicy
    /// Encryption of stored raw proofs; `nil` stores no raw proofs (see ``startupWarnings``).
    public var encryption: ProofEncryption?
    /// Where the ledger logs (debug and trace only; never proofs or keys).
    public var logger: Logger
    /// The ledger's clock: when a change is recorded (events' `recordedAt`, a lease's start,
    /// a migration's stamp). Times a caller passes (`at:`) are the caller's.
    public var now: @Sendable () -> Date
    /// Whether recording moves the analytics rollups (``AnalyticsStore``) in the write's
    /// transaction. Only `storegate-dev bench write-costs` turns it off, to measure what the rollups
    /// cost a write against the same build without them; a ledger recorded without them answers
    /// analytics wrongly until `storegate analytics rebuild`.
    package var maintainsRollups = true
    /// Whether a write queues its rollup changes for a fold (schema 17,
    /// ``AnalyticsStore/foldRollupChanges(limit:)``) or adds them to the rollups itself, as
    /// before 17: for tests that write at an older schema, and for `bench write-costs` to
    /// compare the two.
    package var queuesRollupChanges = true
    /// Whether a write that adds its rollup changes itself (``queuesRollupChanges`` off) adds
    /// their sums per day and currency too (schema 18, `ledger_rollup_days`): off only for
    /// tests that write at a schema before 18, which has no such table.
    package var addsRollupDays = true

    /// Creates a configuration.
    ///
    /// - Parameters:
    ///   - catalog: Product types and groups for receipts (default: empty, every product falls back).
    ///   - accountTokenPolicy: How accounts map to `appAccountToken` (default ``AppAccountTokenPolicy/accountIDIsUUID``).
    ///   - transferPolicy: Refuse another account's proof of an owned purchase, or move the
    ///     purchase to it (default ``TransferPolicy/refuse``).
    ///   - encryption: Keys for raw proofs at rest (default none: raw proofs are not stored).
    ///   - logger: The ledger's logger: pass the application's. Without one the ledger logs
    ///     nothing (a library does not write to a log nobody gave it).
    ///   - now: The clock (default: the system's).
    public init(
        catalog: ProductCatalog = ProductCatalog(),
        accountTokenPolicy: AppAccountTokenPolicy = .accountIDIsUUID,
        transferPolicy: TransferPolicy = .refuse,
        encryption: ProofEncryption? = nil,
        logger: Logger = Logger(label: "storegate.ledger", factory: { _ in SwiftLogNoOpLogHandler() }),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.catalog = catalog
        self.accountTokenPolicy = accountTokenPolicy
        self.transferPolicy = transferPolicy
        self.encryption = encryption
        self.logger = logger
        self.now = now
    }

    /// Whether raw proofs are encrypted at rest.
    public var isEncryptionConfigured: Bool { encryption != nil }

    /// Warnings a service logs when it starts with this configuration.
    ///
    /// Without an encryption key the ledger keeps only each proof's SHA-256 digest, never the
    /// proof in clear; the warning says so.
    public var startupWarnings: [String] {
        guard encryption == nil else { return [] }
        return ["no ledger encryption key is configured: raw proofs are not stored, only their SHA-256 digests (set STOREGATE_LEDGER_KEYS to id=BASE64KEY to keep them, encrypted with AES-256-GCM)"]
    }
}

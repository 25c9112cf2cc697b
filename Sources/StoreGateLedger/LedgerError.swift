/// Why the ledger refused a request or could not answer it.
///
/// Shaped like `ChainError`: equal by ``code``; ``reason`` is for people and never compared.
/// Every backend reports failures with this type, so callers handle one error shape whatever
/// the store. Storage failures carry ``isRetryable`` (a busy SQLite file, a PostgreSQL
/// serialization failure) as a property set by the backend, never derived from a message.
public struct LedgerError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The machine-readable failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable, CaseIterable {
            case invalidAccount = "invalid_account"
            case invalidArgument = "invalid_argument"
            case environmentMismatch = "environment_mismatch"
            case inconsistentTransaction = "inconsistent_transaction"
            case ownedByAnotherAccount = "owned_by_another_account"
            case appAccountTokenMismatch = "app_account_token_mismatch"
            case insufficientBalance = "insufficient_balance"
            case idempotencyKeyReused = "idempotency_key_reused"
            case invalidEncryptionKey = "invalid_encryption_key"
            case unknownEncryptionKey = "unknown_encryption_key"
            case decryptionFailed = "decryption_failed"
            case invalidConfiguration = "invalid_configuration"
            case storage = "storage"
            case migration = "migration"
            case schemaTooNew = "schema_too_new"
            case closed = "closed"
            case cursorExpired = "cursor_expired"
            case corruptState = "corrupt_state"
            case grantNotFound = "grant_not_found"
            case purchaseNotFound = "purchase_not_found"
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The account id is empty, too long or holds control characters.
        public static let invalidAccount = Code(.invalidAccount)
        /// A product id, quantity, idempotency key or transaction field is out of bounds.
        public static let invalidArgument = Code(.invalidArgument)
        /// A transaction's environment differs from the environment of the proof carrying it.
        public static let environmentMismatch = Code(.environmentMismatch)
        /// A transaction id was seen before with a different original transaction id or product.
        public static let inconsistentTransaction = Code(.inconsistentTransaction)
        /// The transaction (or its original transaction) belongs to another account: receipt
        /// sharing or a replay. Nothing was recorded.
        public static let ownedByAnotherAccount = Code(.ownedByAnotherAccount)
        /// The transaction carries an `appAccountToken` that is not the account's token.
        public static let appAccountTokenMismatch = Code(.appAccountTokenMismatch)
        /// The consumable balance is lower than the quantity asked for. Nothing was consumed.
        public static let insufficientBalance = Code(.insufficientBalance)
        /// The idempotency key was already used for another product or quantity.
        public static let idempotencyKeyReused = Code(.idempotencyKeyReused)
        /// An encryption key is not a 256-bit key, or a key id is malformed.
        public static let invalidEncryptionKey = Code(.invalidEncryptionKey)
        /// A stored proof names a key id that is not configured.
        public static let unknownEncryptionKey = Code(.unknownEncryptionKey)
        /// A stored proof did not authenticate under its key (tampered, or the wrong key).
        public static let decryptionFailed = Code(.decryptionFailed)
        /// The ledger configuration is unusable (a malformed URL, a missing setting).
        public static let invalidConfiguration = Code(.invalidConfiguration)
        /// The database failed; see ``LedgerError/isRetryable``.
        public static let storage = Code(.storage)
        /// A schema migration failed.
        public static let migration = Code(.migration)
        /// The database was migrated by a newer StoreGate than this one.
        public static let schemaTooNew = Code(.schemaTooNew)
        /// The ledger was closed.
        public static let closed = Code(.closed)
        /// Events after the given cursor were deleted by retention
        /// (``Ledger/pruneEvents(recordedBefore:limit:)``): reading on would skip them. Start
        /// again from the oldest kept (cursor 0) and reconcile.
        public static let cursorExpired = Code(.cursorExpired)
        /// A background job's stored state (a ``LeasedState``) does not decode as the type
        /// that job keeps there: it is reported, never silently reset.
        public static let corruptState = Code(.corruptState)
        /// The account has no grant of that id.
        public static let grantNotFound = Code(.grantNotFound)
        /// No account owns a purchase family with that original transaction id in that
        /// environment (``Ledger/transfer(_:)``: unknown, or known only from notifications).
        public static let purchaseNotFound = Code(.purchaseNotFound)

        /// A stable snake-case name, used in reports and HTTP error bodies.
        public var description: String { backing.rawValue }

        /// Every code (the HTTP API's error codes are built from it).
        public static let all: [Code] = Backing.allCases.map(Code.init)
    }

    /// What failed.
    public let code: Code
    /// A human-readable explanation; never contains proofs, keys or other accounts' ids.
    public let reason: String
    /// The transaction the failure is about, when there is one.
    public let transactionId: String?
    /// The product the failure is about, when there is one.
    public let productId: String?
    /// For ``Code/insufficientBalance``: the balance that was available.
    public let available: Int?
    /// Whether repeating the same call may succeed (a busy database, a serialization failure).
    public let isRetryable: Bool
    /// The source file that raised it.
    public let file: String
    /// The source line that raised it.
    public let line: UInt

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What failed.
    ///   - reason: A human-readable explanation without secrets.
    ///   - transactionId: The transaction concerned, if any.
    ///   - productId: The product concerned, if any.
    ///   - available: The available balance, for ``Code/insufficientBalance``.
    ///   - isRetryable: Whether the same call may succeed later.
    ///   - file: The source file that raises it (the caller's, by default).
    ///   - line: The source line that raises it (the caller's, by default).
    public init(
        _ code: Code,
        reason: String,
        transactionId: String? = nil,
        productId: String? = nil,
        available: Int? = nil,
        isRetryable: Bool = false,
        file: String = #fileID,
        line: UInt = #line
    ) {
        self.code = code
        self.reason = reason
        self.transactionId = transactionId
        self.productId = productId
        self.available = available
        self.isRetryable = isRetryable
        self.file = file
        self.line = line
    }

    public static func == (lhs: LedgerError, rhs: LedgerError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        var text = "ledger: \(code): \(reason)"
        if let transactionId { text += " (transaction \(transactionId))" }
        if let productId { text += " (product \(productId))" }
        return text
    }
}

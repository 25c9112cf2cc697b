/// Why `storegate migrate` refused to move a ledger, failed while moving it, or found the two
/// sides different.
///
/// Shaped like `LedgerError`: equal by ``code``; ``reason`` is for people (one line, with any
/// password in a URL masked) and never compared. ``table`` names the table concerned, when
/// there is one (a non-empty target, a value the source holds that the target cannot, a
/// verification mismatch).
public struct LedgerMigrationError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The machine-readable failure.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable, CaseIterable {
            case invalidLocation = "invalid_location"
            case unsupportedDirection = "unsupported_direction"
            case sourceUnavailable = "source_unavailable"
            case sourceSchema = "source_schema"
            case sourceValue = "source_value"
            case targetUnavailable = "target_unavailable"
            case targetSchema = "target_schema"
            case targetNotEmpty = "target_not_empty"
            case copyFailed = "copy_failed"
            case verificationFailed = "verification_failed"
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// `--from` or `--to` is not `sqlite:PATH` or a well-formed `postgres://` URL.
        public static let invalidLocation = Code(.invalidLocation)
        /// The pair of locations is not a direction this StoreGate moves (only SQLite to PostgreSQL).
        public static let unsupportedDirection = Code(.unsupportedDirection)
        /// The source cannot be opened or read (missing file, not a database, I/O error).
        public static let sourceUnavailable = Code(.sourceUnavailable)
        /// The source is not a StoreGate ledger at this StoreGate's schema version.
        public static let sourceSchema = Code(.sourceSchema)
        /// A stored value does not have the type its column declares (or is text that is not
        /// UTF-8, or an event payload that is not a JSON object): nothing is coerced.
        public static let sourceValue = Code(.sourceValue)
        /// The target database cannot be reached, migrated or read.
        public static let targetUnavailable = Code(.targetUnavailable)
        /// The target is not a ledger at this StoreGate's schema version (``LedgerMigration/verify(_:progress:)``),
        /// or was migrated by a newer StoreGate.
        public static let targetSchema = Code(.targetSchema)
        /// The target already holds rows: a migration only fills an empty ledger.
        public static let targetNotEmpty = Code(.targetNotEmpty)
        /// The target refused rows, or failed, while they were copied.
        public static let copyFailed = Code(.copyFailed)
        /// A table's row count or digest differs between the two sides.
        public static let verificationFailed = Code(.verificationFailed)

        /// A stable snake-case name.
        public var description: String { backing.rawValue }
    }

    /// What failed.
    public let code: Code
    /// The table concerned, when there is one.
    public let table: String?
    /// A one-line explanation without secrets (passwords in URLs are masked).
    public let reason: String
    /// The source file that raised it.
    public let file: String
    /// The source line that raised it.
    public let line: UInt

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - code: What failed.
    ///   - table: The table concerned, if any.
    ///   - reason: A one-line explanation without secrets.
    ///   - file: The source file that raises it (the caller's, by default).
    ///   - line: The source line that raises it (the caller's, by default).
    public init(_ code: Code, table: String? = nil, reason: String, file: String = #fileID, line: UInt = #line) {
        self.code = code
        self.table = table
        self.reason = reason
        self.file = file
        self.line = line
    }

    public static func == (lhs: LedgerMigrationError, rhs: LedgerMigrationError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }

    public var description: String {
        "migrate: \(code): " + (table.map { "\($0): " } ?? "") + reason
    }
}

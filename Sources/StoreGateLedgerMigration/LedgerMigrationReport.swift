/// What a migration or a verification found, table by table.
public struct LedgerMigrationReport: Sendable, Hashable {
    /// One table on both sides.
    public struct Table: Sendable, Hashable {
        /// The table's name.
        public let name: String
        /// Rows the source returned.
        public let sourceRows: Int
        /// Rows the target returned.
        public let targetRows: Int
        /// SHA-256 (hex) over the source's rows in key order (see the migration guide for the encoding).
        public let sourceDigest: String
        /// SHA-256 (hex) over the target's rows in key order.
        public let targetDigest: String

        /// Whether both sides hold the same rows.
        public var isEqual: Bool { sourceRows == targetRows && sourceDigest == targetDigest }
    }

    /// Every table compared, in the order they were copied.
    public let tables: [Table]

    /// The tables whose count or digest differs.
    public var mismatches: [Table] { tables.filter { !$0.isEqual } }
}

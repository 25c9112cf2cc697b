/// A step of a migration, reported as it ends (the CLI prints one line each).
public enum LedgerMigrationProgress: Sendable, Hashable {
    /// A table was copied: `rows` rows in `seconds`.
    case copied(table: String, rows: Int, seconds: Double)
    /// Sequences were moved past the copied rows and the target analyzed, in `seconds`.
    case finished(seconds: Double)
    /// A table was compared on both sides.
    case compared(LedgerMigrationReport.Table, seconds: Double)
}

import FuzzSupport
@_spi(Fuzzing) import StoreGateLedger

/// What a fold parses when it reads a queued row of rollup changes back from SQLite or
/// PostgreSQL (`ledger_rollup_changes.deltas`, schema 17): any bytes either decode — and then
/// encode and decode back to the same changes — or are refused as a storage error, never
/// folded in part.
@main
enum App {
    static func main() {
        FuzzTarget.run { bytes in
            do throws(LedgerError) {
                let decoded = try RollupChangesFuzzing.decode(bytes)
                FuzzTarget.require(decoded.roundTrips, "decoded rollup changes encode and decode to other changes")
            } catch {
                FuzzTarget.require(error.code == .storage, "damaged rollup changes are refused as \(error.code), not as a storage error")
            }
        }
    }
}

import Foundation
@testable import StoreGateLedgerPostgres
import Testing

/// The pause before a PostgreSQL transaction is tried again: random within a bound that grows
/// with the attempt, so two writers that refused each other do not meet again in step.
@Suite("PostgreSQL retry pauses")
struct PostgresRetryTests {
    @Test("each attempt's pause lies within attempt² × 2 ms, and pauses of one attempt differ", arguments: 1...5)
    func pauses(attempt: Int) {
        let bound = Duration.microseconds(attempt * attempt * 2_000)
        let pauses = (0..<200).map { _ in PostgresLedger.retryPause(attempt: attempt) }
        #expect(pauses.allSatisfy { $0 >= .zero && $0 <= bound })
        // A fixed pause (as before) has no spread; 200 random draws cover most of the range.
        let spread = (pauses.max() ?? .zero) - (pauses.min() ?? .zero)
        #expect(spread >= bound / 2, "spread \(spread) of \(bound)")
    }
}

import Foundation
import StoreGateCore
@testable import StoreGateLedgerPostgres
import Testing

/// The pause before a PostgreSQL transaction is tried again: random within a bound that grows
/// with the attempt, so two writers that refused each other do not meet again in step.
@Suite("PostgreSQL retry pauses")
struct PostgresRetryTests {
    @Test("each retry's pause lies within 2, 4, 8, 16, 32 ms, and pauses of one retry differ", arguments: 1...5)
    func pauses(attempt: Int) {
        let bound = Duration.milliseconds(2 << (attempt - 1))
        let pauses = (0..<200).map { _ in PostgresLedger.retryBackoff.delay(afterFailures: attempt) }
        #expect(pauses.allSatisfy { $0 >= .zero && $0 <= bound })
        // A fixed pause (as before) has no spread; 200 random draws cover most of the range.
        let spread = (pauses.max() ?? .zero) - (pauses.min() ?? .zero)
        #expect(spread >= bound / 2, "spread \(spread) of \(bound)")
    }
}

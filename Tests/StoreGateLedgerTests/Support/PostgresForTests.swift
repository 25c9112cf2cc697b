import Foundation
import StoreGateLedger

/// PostgreSQL for the ledger tests (filled in with the PostgreSQL backend).
enum PostgresForTests {
    static var shouldRun: Bool { false }

    static func freshDatabase() async throws -> String {
        throw LedgerError(.invalidConfiguration, reason: "PostgreSQL is not available")
    }

    static func open(url: String, configuration: LedgerConfiguration) async throws -> any Ledger {
        throw LedgerError(.invalidConfiguration, reason: "PostgreSQL is not available")
    }
}

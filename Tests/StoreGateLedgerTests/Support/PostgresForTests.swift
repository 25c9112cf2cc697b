import Foundation
import StoreGateLedger
import StoreGateLedgerPostgres
import StoreGateTestSupport
import Testing

/// The PostgreSQL server of the ledger tests: one ``TemporaryPostgres`` started around the
/// whole ``LedgerTests`` suite (by the ``PostgresServerTrait``), one fresh database per test.
///
/// PostgreSQL tests run when the binaries are here or `STOREGATE_REQUIRE_POSTGRES=1`; in the
/// second case a machine without them fails instead of skipping.
enum PostgresForTests {
    /// Whether the PostgreSQL cases are part of the run.
    static var shouldRun: Bool { TemporaryPostgres.isAvailable || TemporaryPostgres.isRequired }

    @TaskLocal static var server: TemporaryPostgres?

    /// A new, empty database on the suite's server.
    static func freshDatabase() async throws -> String {
        guard let server else {
            throw TemporaryPostgres.Failure("no PostgreSQL server: the test is not inside the LedgerTests suite")
        }
        return try await server.makeDatabase()
    }

    /// A ledger on `url` (migrated), with a small pool.
    static func open(url: String, configuration: LedgerConfiguration, maximumConnections: Int = 8) async throws -> any Ledger {
        try await PostgresLedger.connect(url: url, configuration: configuration, maximumConnections: maximumConnections)
    }
}

/// Starts the PostgreSQL server once around a suite and stops it afterwards.
struct PostgresServerTrait: SuiteTrait, TestScoping {
    var isRecursive: Bool { false }

    func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        guard PostgresForTests.shouldRun else {
            try await function()
            return
        }
        // fsync off: these tests kill clients, never the server; benchmarks keep it on.
        // 500 connections: the suite's tests run in parallel, each with a pool of up to 8 (16
        // concurrent writers fill it); a release run reached the default 200 ("too many clients").
        let server = try await TemporaryPostgres.launch(TemporaryPostgres.Options(fsync: false, maxConnections: 500))
        do {
            try await PostgresForTests.$server.withValue(server) {
                try await function()
            }
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
}

extension Trait where Self == PostgresServerTrait {
    /// A throwaway PostgreSQL server around the suite (see ``PostgresForTests``).
    static var temporaryPostgres: Self { PostgresServerTrait() }
}

import Foundation
import StoreGateLedger
import StoreGateTestSupport
@testable import StoreGateLedgerSQLite
import Testing

/// A ledger backend under test: the contract suite runs every test against each.
struct LedgerBackend: Sendable, CustomTestStringConvertible {
    enum Kind: String, Sendable {
        case memory, sqlite, postgres
    }

    let kind: Kind

    var testDescription: String { kind.rawValue }

    static let memory = LedgerBackend(kind: .memory)
    static let sqlite = LedgerBackend(kind: .sqlite)
    static let postgres = LedgerBackend(kind: .postgres)

    /// Every backend: PostgreSQL when its binaries are here or `STOREGATE_REQUIRE_POSTGRES=1`.
    static var all: [LedgerBackend] { [memory, sqlite] + (PostgresForTests.shouldRun ? [postgres] : []) }

    /// The backends that keep data across reopening.
    static var persistent: [LedgerBackend] { all.filter { $0.kind != .memory } }

    /// Runs `body` with a ledger on a fresh, empty store, closing it afterwards.
    func withLedger<T: Sendable>(
        _ configuration: LedgerConfiguration = LedgerConfiguration(),
        _ body: @Sendable (any Ledger) async throws -> T
    ) async throws -> T {
        try await withStore { store in
            try await body(try await store.open(configuration))
        }
    }

    /// Runs `body` with a fresh, empty store on which it can open ledgers (several at once, or
    /// one after another to check what survives reopening). Every ledger is closed afterwards.
    func withStore<T: Sendable>(_ body: @Sendable (LedgerStore) async throws -> T) async throws -> T {
        let store: LedgerStore
        var cleanup: @Sendable () async throws -> Void = {}
        switch kind {
        case .memory:
            store = LedgerStore(location: "memory") { configuration in InMemoryLedger(configuration: configuration) }
        case .sqlite:
            let directory = try TemporaryFiles.directory("ledger")
            let path = directory.appendingPathComponent("ledger.sqlite").path
            // A timeline index batch of 3: the contract's timelines read across the indexed mark.
            var options = SQLiteLedger.Options()
            options.timelineIndexBatch = 3
            store = LedgerStore(location: path) { [options] configuration in try SQLiteLedger(path: path, configuration: configuration, options: options) }
            cleanup = { try FileManager.default.removeItem(at: directory) }
        case .postgres:
            let url = try await PostgresForTests.freshDatabase()
            store = LedgerStore(location: url) { configuration in try await PostgresForTests.open(url: url, configuration: configuration) }
        }
        do {
            let result = try await body(store)
            await store.closeAll()
            try await cleanup()
            return result
        } catch {
            await store.closeAll()
            try await cleanup()
            throw error
        }
    }
}

/// One store of a backend: a SQLite file, a PostgreSQL database, or (for `memory`) nothing
/// shared — each `open` of the memory backend is a new, empty ledger.
final class LedgerStore: Sendable {
    /// The SQLite path or PostgreSQL URL.
    let location: String
    private let opener: @Sendable (LedgerConfiguration) async throws -> any Ledger
    private let opened = OpenedLedgers()

    init(location: String, opener: @escaping @Sendable (LedgerConfiguration) async throws -> any Ledger) {
        self.location = location
        self.opener = opener
    }

    func open(_ configuration: LedgerConfiguration = LedgerConfiguration()) async throws -> any Ledger {
        let ledger = try await opener(configuration)
        await opened.add(ledger)
        return ledger
    }

    func closeAll() async {
        for ledger in await opened.take() { await ledger.close() }
    }
}

private actor OpenedLedgers {
    var ledgers: [any Ledger] = []
    func add(_ ledger: any Ledger) { ledgers.append(ledger) }
    func take() -> [any Ledger] {
        defer { ledgers = [] }
        return ledgers
    }
}

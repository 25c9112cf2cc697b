import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// The SQLite ledger's page cache and memory-mapped I/O: bounded defaults (2 MiB a connection,
/// nothing mapped), configurable, and applied to the writer and every reader.
@Suite("SQLite memory options")
struct SQLiteMemoryOptionsTests {
    static func temporaryPath() throws -> String {
        try TemporaryFiles.directory("memory-options").appendingPathComponent("ledger.sqlite").path
    }

    static let mebibyte = 1 << 20

    @Test("the options default to SQLite's own 2 MiB page cache and no mapping; a smaller cache than 256 KiB is raised to it")
    func defaults() {
        let options = SQLiteLedger.Options()
        #expect(options.pageCacheBytes == 2 * Self.mebibyte)
        #expect(options.mappedBytes == 0)
        #expect(SQLiteLedger.Options(pageCacheBytes: 1024).pageCacheBytes == 256 << 10)
        #expect(SQLiteLedger.Options(mappedBytes: -5).mappedBytes == 0)
    }

    static let configured: [(pageCache: Int, mapped: Int)] = [(8 * mebibyte, 0), (4 * mebibyte, 64 * mebibyte)]

    @Test("the writer and the readers take the configured page cache and mapping", arguments: configured)
    func applied(setting: (pageCache: Int, mapped: Int)) async throws {
        let (pageCache, mapped) = setting
        let ledger = try SQLiteLedger(path: try Self.temporaryPath(), options: SQLiteLedger.Options(pageCacheBytes: pageCache, mappedBytes: mapped))
        try await ledger.record(Purchases.proof(Purchases.consumable("coins", quantity: 1)), for: Purchases.account("alice"))
        let writer = try await ledger.write { connection throws(LedgerError) -> Int64 in
            var size: Int64 = 0
            try connection.query("PRAGMA cache_size") { row throws(LedgerError) in size = row.integer(0) }
            return size
        }
        #expect(writer == -Int64(pageCache / 1024))
        let (reader, mapping) = try ledger.read(snapshot: false) { connection throws(LedgerError) -> (Int64, Int64) in
            var size: Int64 = 0
            var mapping: Int64 = -1
            try connection.query("PRAGMA cache_size") { row throws(LedgerError) in size = row.integer(0) }
            try connection.query("PRAGMA mmap_size") { row throws(LedgerError) in mapping = row.integer(0) }
            return (size, mapping)
        }
        #expect(reader == -Int64(pageCache / 1024))
        #expect(mapping == Int64(mapped))
        // The ledger still answers through them.
        #expect(try await ledger.entitlements(for: Purchases.account("alice"), at: Purchases.date(2)).balance(of: "coins") == 1)
        await ledger.close()
    }
}

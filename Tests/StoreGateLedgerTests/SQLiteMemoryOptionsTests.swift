import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// The SQLite ledger's page cache and memory-mapped I/O: sized from the machine's memory
/// within a stated bound unless configured, and applied to the writer and every reader.
@Suite("SQLite memory options")
struct SQLiteMemoryOptionsTests {
    static func temporaryPath() throws -> String {
        try TemporaryFiles.directory("memory-options").appendingPathComponent("ledger.sqlite").path
    }

    static let mebibyte = 1 << 20
    static let gibibyte = 1 << 30
    /// Memory → the default page cache per connection.
    static let sizes: [(memory: Int, cache: Int)] = [
        (0, 2 * mebibyte), (512 * mebibyte, 2 * mebibyte), (2 * gibibyte, 2 * mebibyte), (4 * gibibyte, 4 * mebibyte),
        (8 * gibibyte, 8 * mebibyte), (16 * gibibyte, 16 * mebibyte), (24 * gibibyte, 16 * mebibyte), (1024 * gibibyte, 16 * mebibyte),
    ]

    @Test("the default page cache is a 1/1024 of the memory, between 2 and 16 MiB", arguments: sizes)
    func defaultPageCache(size: (memory: Int, cache: Int)) {
        #expect(SQLiteLedger.Options.defaultPageCacheBytes(memory: size.memory) == size.cache)
    }

    @Test("the options default to the machine-sized page cache and no mapping; a smaller cache than SQLite's own is raised to it")
    func defaults() {
        let options = SQLiteLedger.Options()
        #expect(options.pageCacheBytes == SQLiteLedger.Options.defaultPageCacheBytes(memory: SQLiteMachineMemory.bytes))
        #expect(options.pageCacheBytes >= 2 << 20 && options.pageCacheBytes <= 16 << 20)
        #expect(options.mappedBytes == 0)
        #expect(SQLiteLedger.Options(pageCacheBytes: 1024).pageCacheBytes == 2 << 20)
        #expect(SQLiteLedger.Options(mappedBytes: -5).mappedBytes == 0)
        #expect(SQLiteMachineMemory.bytes > 0)
    }

    @Test("a control group's limit is read in bytes; 'max', garbage and an absent file are no limit")
    func controlGroupLimit() throws {
        let directory = try TemporaryFiles.directory("memory-options")
        defer { try? FileManager.default.removeItem(at: directory) }  // best effort: a temporary folder
        for (text, expected) in [("536870912\n", 536_870_912 as Int?), ("max\n", nil), ("", nil)] {
            let path = directory.appendingPathComponent("memory.max").path
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            #expect(SQLiteMachineMemory.limit(at: path) == expected, "\(text)")
        }
        #expect(SQLiteMachineMemory.limit(at: directory.appendingPathComponent("absent").path) == nil)
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

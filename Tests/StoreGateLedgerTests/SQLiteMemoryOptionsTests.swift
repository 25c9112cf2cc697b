import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// The SQLite ledger's page cache and memory-mapped I/O: bounded defaults (a page cache sized
/// from the machine, nothing mapped), configurable, and applied to the writer and every reader.
@Suite("SQLite memory options")
struct SQLiteMemoryOptionsTests {
    static func temporaryPath() throws -> String {
        try TemporaryFiles.directory("memory-options").appendingPathComponent("ledger.sqlite").path
    }

    static let mebibyte = 1 << 20

    @Test("the options default to a page cache sized from the machine and no mapping; a smaller cache than 256 KiB is raised to it")
    func defaults() {
        let options = SQLiteLedger.Options()
        #expect(options.pageCacheBytes == SQLiteLedger.Options.machinePageCacheBytes())
        #expect(options.mappedBytes == 0)
        #expect(SQLiteLedger.Options(pageCacheBytes: 1024).pageCacheBytes == 256 << 10)
        #expect(SQLiteLedger.Options(mappedBytes: -5).mappedBytes == 0)
    }

    static let gibibyte: UInt64 = 1 << 30
    /// (memory, cores, MiB per connection): 1/128 of the memory, at most 64 MiB, over the writer
    /// and a reader per core, in whole MiB, never under 2 MiB.
    static let machines: [(memory: UInt64, cores: Int, mebibytes: Int)] = [
        (24 * gibibyte, 2, 21),  // this project's machine: 64 MiB over 3
        (1 * gibibyte, 1, 4),  // 8 MiB over 2
        (512 << 20, 4, 2),  // 4 MiB over 5 is under the floor
        (4 * gibibyte, 2, 10),  // 32 MiB over 3
        (256 * gibibyte, 64, 2),  // the budget's 64 MiB over 65 connections: the floor
        (256 * gibibyte, 7, 8),  // 64 MiB over 8
        (16 * gibibyte, 0, 32),  // no core reported counts as one: the budget's 64 MiB over 2
    ]

    @Test("the machine's page cache: 1/128 of its memory, at most 64 MiB, split over the writer and a reader per core, at least 2 MiB", arguments: machines)
    func machineSized(machine: (memory: UInt64, cores: Int, mebibytes: Int)) {
        let bytes = SQLiteLedger.Options.machinePageCacheBytes(physicalMemory: machine.memory, cores: machine.cores)
        #expect(bytes == machine.mebibytes * Self.mebibyte)
        #expect(bytes % Self.mebibyte == 0)
        // The stated bound: the writer and a reader per core hold at most the budget, or the floor each.
        let connections = max(1, machine.cores) + 1
        #expect(bytes * connections <= max(SQLiteLedger.Options.pageCacheBudgetBytes, SQLiteLedger.Options.defaultPageCacheBytes * connections))
        #expect(UInt64(bytes * connections) <= max(machine.memory / 128, UInt64(SQLiteLedger.Options.defaultPageCacheBytes * connections)))
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

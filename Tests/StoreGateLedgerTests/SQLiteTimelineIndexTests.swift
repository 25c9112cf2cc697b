import Foundation
import StoreGateCore
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// The console's timeline on SQLite reads an index the writer fills behind the writes, plus the
/// tail not yet indexed: every read must be exact wherever the mark stands.
@Suite("SQLite timeline index, filled behind the writes")
struct SQLiteTimelineIndexTests {
    static let accounts = ["alice", "bob", "carol"].map(Purchases.account)

    static func open(_ path: String, batch: Int) throws -> SQLiteLedger {
        var options = SQLiteLedger.Options()
        options.timelineIndexBatch = batch
        return try SQLiteLedger(path: path, options: options)
    }

    /// `indexed_through` and the number of index rows, read from the file.
    static func mark(_ path: String) throws -> (indexedThrough: Int64, rows: Int) {
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 5000)
        defer { connection.close() }
        var mark: (Int64, Int) = (0, 0)
        try connection.query("SELECT indexed_through, (SELECT COUNT(*) FROM ledger_event_accounts) FROM ledger_event_index") { row throws(LedgerError) in
            mark = (row.integer(0), Int(row.integer(1)))
        }
        return mark
    }

    /// Each account's timeline, read whole and in pages of `page`, equals its events in the stream.
    static func expectTimelines(_ ledger: SQLiteLedger, page: Int) async throws {
        let stream = try await ledger.events(after: 0, limit: 1000)
        for account in accounts + [Purchases.account("nobody")] {
            let expected = stream.filter { $0.account == account }.reversed().map(\.sequence)
            #expect(try await ledger.timeline(for: account, before: nil, limit: 1000).map(\.sequence) == Array(expected))
            var paged: [Int64] = []
            var cursor: Int64?
            while true {
                let events = try await ledger.timeline(for: account, before: cursor, limit: page)
                guard let last = events.last else { break }
                #expect(events.count <= page)
                paged += events.map(\.sequence)
                cursor = last.sequence
            }
            #expect(paged == Array(expected), "\(account.rawValue), pages of \(page)")
        }
    }

    @Test("after every write, each account's timeline is exact, whole and in pages, with the mark anywhere")
    func exactAcrossTheMark() async throws {
        let path = try SQLiteWriterTests.temporaryPath()
        let ledger = try Self.open(path, batch: 4)
        var marks: Set<Int64> = []
        for index in 0..<24 {
            let account = Self.accounts[(index * 7) % 3]
            try await ledger.record(Purchases.proof(Purchases.consumable("c-\(index)", quantity: 1 + index % 2)), for: account)
            if index % 5 == 0 {
                try await ledger.consume("coins", quantity: 1, idempotencyKey: "k-\(index)", for: account, at: Purchases.t0)
            }
            try await Self.expectTimelines(ledger, page: 3)
            let mark = try Self.mark(path)
            #expect(mark.rows == Int(mark.indexedThrough), "every event up to the mark is indexed, none after it")
            marks.insert(mark.indexedThrough)
        }
        let total = try await ledger.events(after: 0, limit: 1000).count
        let mark = try Self.mark(path)
        #expect(mark.indexedThrough > 0 && total - Int(mark.indexedThrough) < 4 + 2, "the tail stays within about a batch")
        #expect(marks.count > 5, "the mark moved in steps as events came")
        await ledger.close()
    }

    @Test("with 16 writers committing in groups, the unindexed tail stays within a batch and one group's events")
    func boundedTailUnderGroupCommit() async throws {
        let path = try SQLiteWriterTests.temporaryPath()
        let ledger = try Self.open(path, batch: 8)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<16 {
                group.addTask {
                    for index in stride(from: writer, to: 800, by: 16) {
                        try await ledger.record(
                            Purchases.proof(Purchases.consumable("g-\(index)")), for: Self.accounts[index % 3]
                        )
                    }
                }
            }
            try await group.waitForAll()
        }
        let total = try await ledger.events(after: 0, limit: 1000).count
        #expect(total == 800)
        let mark = try Self.mark(path)
        // A group commit takes at most 64 jobs, here one event each.
        #expect(total - Int(mark.indexedThrough) < 8 + SQLiteWriter.maximumBatch, "tail \(total - Int(mark.indexedThrough))")
        try await Self.expectTimelines(ledger, page: 50)
        await ledger.close()
    }

    @Test("a ledger that never indexed (a large batch, then closed) is indexed whole by the next one to open the file")
    func catchUpAtOpen() async throws {
        let path = try SQLiteWriterTests.temporaryPath()
        let first = try Self.open(path, batch: 10_000)
        for index in 0..<12 {
            try await first.record(Purchases.proof(Purchases.nonConsumable("n-\(index)", product: "feature.\(index)")), for: Self.accounts[index % 3])
        }
        try await Self.expectTimelines(first, page: 5)
        await first.close()
        #expect(try Self.mark(path) == (0, 0), "nothing indexed yet: the timeline was read from the tail")

        let second = try Self.open(path, batch: 5)
        #expect(try Self.mark(path) == (12, 12))
        try await Self.expectTimelines(second, page: 5)
        await second.close()
    }
}

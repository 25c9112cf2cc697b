import Foundation
import StoreGateCore
import StoreGateTestSupport
import Testing

@testable import StoreGateLedger
@testable import StoreGateLedgerSQLite

/// The writer restarts the WAL itself once it holds `logRestartFrames` frames
/// (`SQLiteCheckpointer.restartLogIfLong`): passive checkpoints alone never let the log start
/// over while readers keep using it, and the writer runs no automatic checkpoint.
@Suite("SQLite: the writer restarts the write-ahead log")
struct SQLiteLogRestartTests {
    /// The frames in the log, asked of a connection of its own (a passive checkpoint reports them).
    static func logFrames(_ path: String) throws -> Int {
        let connection = try SQLiteConnection(path: path, create: false, busyTimeoutMilliseconds: 1_000)
        defer { connection.close() }
        var frames = -1
        try connection.query("PRAGMA wal_checkpoint(PASSIVE)") { row throws(LedgerError) in frames = Int(row.integer(1)) }
        return frames
    }

    @Test("with readers reading throughout, the log stays within a few restart sizes, and every write is kept")
    func logStaysBounded() async throws {
        let path = try TemporaryFiles.directory("log-restart").appendingPathComponent("ledger.sqlite").path
        var options = SQLiteLedger.Options()
        options.logRestartFrames = 64
        let ledger = try SQLiteLedger(path: path, configuration: LedgerConfiguration(), options: options)
        let buyers = (0..<8).map { Purchases.account("buyer-\($0)") }
        let writes = 600
        let reading = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for buyer in buyers.prefix(4) {
                    group.addTask {
                        // Snapshots read one after another, yielding so that the writes run too (two cores).
                        while !Task.isCancelled {
                            _ = try await ledger.entitlements(for: buyer, at: Purchases.date(30))
                            await Task.yield()
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
        var largest = 0
        for index in 0..<writes {
            let proof = Purchases.proof(Purchases.consumable("coin-\(index)", at: Purchases.date(Double(index) / 100)))
            try await ledger.record(proof, for: buyers[index % buyers.count])
            if index % 50 == 49 { largest = max(largest, try Self.logFrames(path)) }
        }
        reading.cancel()
        _ = await reading.result
        // Measured here: 62-76 frames at most with the restarts, 589-1,044 without them.
        #expect(largest > 0)
        #expect(largest < 64 * 4, "the log held \(largest) frames at most")
        var total = 0
        for buyer in buyers { total += try await ledger.balance(of: "coins", for: buyer).available }
        #expect(total == writes)
        await ledger.close()
    }
}

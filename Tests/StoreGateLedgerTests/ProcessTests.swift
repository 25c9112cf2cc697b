import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Other processes: a writer killed with SIGKILL, and two processes consuming at once.
    /// They run the `storegate-dev ledger-stress` helper built with these tests.
    @Suite("Ledger across processes")
    struct Processes {
        let alice = Purchases.account("alice")

        static func targetArguments(_ backend: LedgerBackend, _ store: LedgerStore) -> [String] {
            backend.kind == .postgres ? ["--postgres-url", store.location] : ["--sqlite", store.location]
        }

        static func temporaryFile() -> String {
            FileManager.default.temporaryDirectory.appendingPathComponent("storegate-child-\(UUID().uuidString).log").path
        }

        @Test("a writer killed with SIGKILL, three times, loses nothing it acknowledged, leaves an intact store, and every change has exactly its event", arguments: LedgerBackend.persistent)
        func killedWriter(backend: LedgerBackend) async throws {
            let binary = try StoreGateBinary.locate()
            try await backend.withStore { store async throws in
                // Create the schema first, so the child's start-up is not what gets killed.
                await store.closeAll()
                _ = try await store.open()
                var acknowledged: [String] = []
                for round in 0..<3 {
                    let output = Self.temporaryFile()
                    defer { try? FileManager.default.removeItem(atPath: output) }
                    let child = try ChildProcess.spawn(binary, ["ledger-stress", "record"] + Self.targetArguments(backend, store) + [
                        "--account", "alice", "--prefix", "crash\(round)", "--count", "1000000",
                    ], outputPath: output)
                    let deadline = Date().addingTimeInterval(120)
                    var ended: Int32?
                    // Kill at a different point each round.
                    let killAfter = 150 + 100 * round
                    while child.completeLines().count < killAfter, Date() < deadline {
                        ended = child.poll()
                        if ended != nil { break }
                        try await Task.sleep(for: .milliseconds(5))
                    }
                    if ended == nil {
                        child.kill()
                        #expect(child.wait() == 128 + SIGKILL)
                    }
                    let lines = child.completeLines()
                    try #require(ended == nil, "the writer ended by itself: \(child.output().suffix(500))")
                    try #require(lines.count >= killAfter, "the writer acknowledged only \(lines.count) transactions: \(child.output().suffix(500))")
                    let acks = lines.compactMap { $0.hasPrefix("ack ") ? String($0.dropFirst(4)) : nil }
                    #expect(acks.count == lines.count)
                    acknowledged += acks
                }

                let ledger = try await store.open()
                #expect(try await ledger.checkIntegrity().isHealthy)
                var missing: [String] = []
                for id in acknowledged where try await ledger.transaction(id, in: .production)?.account != alice {
                    missing.append(id)
                }
                #expect(missing.isEmpty, "acknowledged but not stored: \(missing.prefix(10))")
                // At most the one transaction in flight at each kill is stored unacknowledged.
                let purchased = try await ledger.balance(of: "coins", for: alice).purchased
                #expect(purchased >= acknowledged.count && purchased <= acknowledged.count + 3)

                // The outbox: one consumable.credited per stored transaction, none for anything
                // not stored, sequences strictly increasing, each event's balance a running total.
                var events: [LedgerEvent] = []
                var cursor: Int64 = 0
                while true {
                    let page = try await ledger.events(after: cursor, limit: 1000)
                    guard let last = page.last else { break }
                    events += page
                    cursor = last.sequence
                }
                #expect(events.count == purchased, "\(events.count) events for \(purchased) purchased units")
                #expect(events.allSatisfy { $0.type == .consumableCredited && $0.account == alice })
                #expect(zip(events, events.dropFirst()).allSatisfy { $0.sequence < $1.sequence })
                let ids = events.compactMap(\.transactionId)
                #expect(Set(ids).count == ids.count, "a change has two events")
                #expect(Set(acknowledged).isSubset(of: Set(ids)), "an acknowledged change has no event")
                var orphans: [String] = []
                for id in ids where try await ledger.transaction(id, in: .production) == nil { orphans.append(id) }
                #expect(orphans.isEmpty, "events without their change: \(orphans.prefix(5))")
                #expect(events.enumerated().allSatisfy { index, event in event.entitlement?.balance?.purchased == index + 1 })
            }
        }

        @Test("two processes fire 200 concurrent consumptions at a balance of 50: exactly 50 succeed", arguments: LedgerBackend.persistent)
        func twoProcessesConsume(backend: LedgerBackend) async throws {
            let binary = try StoreGateBinary.locate()
            try await backend.withStore { store async throws in
                let ledger = try await store.open()
                try await ledger.record(Purchases.proof((0..<5).map { Purchases.consumable("c\($0)", quantity: 10) }), for: alice)
                #expect(try await ledger.balance(of: "coins", for: alice).available == 50)

                let outputs = [Self.temporaryFile(), Self.temporaryFile()]
                defer { for path in outputs { try? FileManager.default.removeItem(atPath: path) } }
                let children = try outputs.enumerated().map { index, output in
                    try ChildProcess.spawn(binary, ["ledger-stress", "consume"] + Self.targetArguments(backend, store) + [
                        "--account", "alice", "--product", "coins", "--count", "100", "--key-prefix", "process\(index)",
                    ], outputPath: output)
                }
                var consumed = 0
                var refused = 0
                var failed = 0
                for child in children {
                    let deadline = Date().addingTimeInterval(120)
                    var status = child.poll()
                    while status == nil, Date() < deadline {
                        try await Task.sleep(for: .milliseconds(20))
                        status = child.poll()
                    }
                    if status == nil { child.kill(); child.wait() }
                    #expect(status == 0, "a consuming process failed: \(child.output().suffix(500))")
                    let line = try #require(child.completeLines().last, "no result line: \(child.output().suffix(500))")
                    let counts = try JSONDecoder().decode([String: Int].self, from: Data(line.utf8))
                    consumed += counts["consumed"] ?? 0
                    refused += counts["refused"] ?? 0
                    failed += counts["failed"] ?? 0
                }
                #expect(consumed == 50)
                #expect(refused == 150)
                #expect(failed == 0)
                #expect(try await ledger.balance(of: "coins", for: alice) == ConsumableBalance(productId: "coins", purchased: 50, refunded: 0, consumed: 50))
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }
    }
}

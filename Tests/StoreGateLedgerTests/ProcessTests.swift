import Foundation
import StoreGateCore
import StoreGateLedger
import StoreGateTestSupport
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

        static func temporaryFile() throws -> String {
            try TemporaryFiles.directory("child").appendingPathComponent("child.log").path
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
                    let output = try Self.temporaryFile()
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
                let events = try await Events.drain(ledger)
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
                // Read twice here first: on SQLite the account is then held by this process's
                // account cache, which the other processes' commits must empty (checked below).
                for _ in 0..<2 { #expect(try await ledger.entitlements(for: alice, at: Date()).balance(of: "coins") == 50) }

                let outputs = [try Self.temporaryFile(), try Self.temporaryFile()]
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
                #expect(try await ledger.entitlements(for: alice, at: Date()).balance(of: "coins") == 0, "a cached read missed other processes' commits")
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }
        @Test("a deliverer killed with SIGKILL mid-delivery, five times, loses no event: every one reaches the receiver, signed, in per-account order", arguments: LedgerBackend.persistent)
        func killedDeliverer(backend: LedgerBackend) async throws {
            let binary = try StoreGateBinary.locate()
            let secret = "stress-webhook-secret-0123456789"
            try await backend.withStore { store async throws in
                await store.closeAll()
                let ledger = try await store.open()
                let deliveries: any EventDeliveryStore = ledger
                try await WebhookReceiver.run(secret: secret) { receiver async throws in
                    // A tenth of the requests fail, a third answer slowly: kills land mid-request.
                    receiver.setMode(.chaos(failures: 0.1, stalls: 0, stall: .zero, slow: 0.3, slowDelay: .milliseconds(120)))
                    func spawn() async throws -> (ChildProcess, String) {
                        let output = try Self.temporaryFile()
                        let child = try ChildProcess.spawn(binary, ["ledger-stress", "deliver"] + Self.targetArguments(backend, store) + [
                            "--url", receiver.url, "--secret", secret, "--attempt-timeout-ms", "1000", "--lease-margin-ms", "300",
                        ], outputPath: output)
                        let deadline = Date().addingTimeInterval(60)
                        while !child.completeLines().contains("delivering"), child.poll() == nil, Date() < deadline {
                            try await Task.sleep(for: .milliseconds(5))
                        }
                        return (child, output)
                    }
                    // An endpoint starts at the stream's end when first seen: register it before
                    // anything is recorded (the first deliverer may reach it late on a busy machine).
                    #expect(try await deliveries.fanOut(endpoint: "receiver", types: nil, limit: 1, now: Date()) == 0)
                    var recorded = 0
                    for round in 0..<5 {
                        let (child, output) = try await spawn()
                        defer { try? FileManager.default.removeItem(atPath: output) }
                        for index in 0..<40 {
                            let account = Purchases.account("acct-\(index % 8)")
                            try await ledger.record(Purchases.proof(Purchases.consumable("r\(round)-\(index)")), for: account)
                            recorded += 1
                        }
                        let before = receiver.received.count
                        let deadline = Date().addingTimeInterval(60)
                        while receiver.received.count < before + 10 + 5 * round, child.poll() == nil, Date() < deadline {
                            try await Task.sleep(for: .milliseconds(2))
                        }
                        try #require(child.poll() == nil, "the deliverer ended by itself: \(child.output().suffix(500))")
                        child.kill()
                        #expect(child.wait() == 128 + SIGKILL)
                    }

                    // A last deliverer, after the killed ones' leases end, finishes the job.
                    receiver.setMode(.healthy)
                    let (last, output) = try await spawn()
                    defer {
                        last.kill()
                        _ = last.wait()
                        try? FileManager.default.removeItem(atPath: output)
                    }
                    let events = try await Events.drain(ledger)
                    #expect(events.count == recorded)
                    let ids = Set(events.map(\.id))
                    let deadline = Date().addingTimeInterval(90)
                    while Date() < deadline {
                        let counts = try await deliveries.deliveryCounts()["receiver"] ?? [:]
                        if counts[.delivered] == events.count, (counts[.pending] ?? 0) == 0 { break }
                        try await Task.sleep(for: .milliseconds(50))
                    }
                    let counts = try await deliveries.deliveryCounts()["receiver"] ?? [:]
                    #expect(counts[.delivered] == events.count, "deliveries: \(counts)")
                    #expect((counts[.failed] ?? 0) == 0 && (counts[.pending] ?? 0) == 0)

                    let arrivals = receiver.received
                    let taken = Set(arrivals.filter { $0.status == 200 }.map(\.id))
                    #expect(ids.isSubset(of: taken), "\(ids.subtracting(taken).count) events never reached the receiver")
                    #expect(Set(arrivals.map(\.id)).isSubset(of: ids), "the receiver got an event the ledger does not have")
                    #expect(arrivals.allSatisfy { $0.signatureValid })
                    // Per account, events first arrive in sequence order: a later event waits until
                    // the earlier one is delivered, across kills. (A copy may arrive late: a request
                    // the deliverer gave up on can reach the receiver after its retry.)
                    for (account, list) in Dictionary(grouping: arrivals, by: \.account) {
                        var seen: Set<String> = []
                        let firsts = list.filter { seen.insert($0.id).inserted }.map(\.sequence)
                        #expect(firsts == firsts.sorted(), "out of order for \(account): \(firsts.prefix(20))")
                    }
                    // A duplicate is the same event: same id, sequence, type and account.
                    for (_, copies) in Dictionary(grouping: arrivals, by: \.id) where copies.count > 1 {
                        #expect(Set(copies.map { "\($0.sequence) \($0.type) \($0.account)" }).count == 1)
                    }
                    let duplicates = arrivals.count - Set(arrivals.map(\.id)).count
                    print("killed deliverer (\(backend.kind)): \(events.count) events, \(arrivals.count) requests, \(duplicates) repeats")
                }
            }
        }
    }
}

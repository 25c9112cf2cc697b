import Foundation
@testable import StoreGateLedger
import Testing

extension LedgerTests {
    /// The leased states background jobs (the App Store sync) keep their cursors in: one
    /// holder at a time, a lease that runs out, saves fenced against a holder that lost it.
    @Suite("Ledger contract: leased states")
    struct Leases {
        static let now = Date().ledgerNormalized
        static func at(_ seconds: Double) -> Date { now.addingTimeInterval(seconds).ledgerNormalized }

        @Test("one holder at a time; a lease that runs out is taken over; a stale holder cannot save", arguments: LedgerBackend.all)
        func leases(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let store: any LeasedStateStore = ledger
                let name = "sync/test/Production"
                let first = try #require(try await store.acquireLease(on: name, holder: "a", now: Self.now, lease: .seconds(60)))
                #expect(first.value == nil)
                #expect(first.holder == "a")
                #expect(first.leaseUntil == Self.at(60))
                // Another holder waits while the lease runs; the holder renews it.
                #expect(try await store.acquireLease(on: name, holder: "b", now: Self.at(30), lease: .seconds(60)) == nil)
                #expect(try await store.saveLeasedState(name, value: "{\"n\":1}", holder: "a", now: Self.at(30), lease: .seconds(60)))
                #expect(try await store.acquireLease(on: name, holder: "b", now: Self.at(80), lease: .seconds(60)) == nil)
                let renewed = try #require(try await store.acquireLease(on: name, holder: "a", now: Self.at(80), lease: .seconds(60)))
                #expect(renewed.value == "{\"n\":1}")
                #expect(renewed.updatedAt == Self.at(30))

                // "a" stalls; its lease runs out and "b" takes the state over, value included.
                let taken = try #require(try await store.acquireLease(on: name, holder: "b", now: Self.at(141), lease: .seconds(60)))
                #expect(taken.value == "{\"n\":1}")
                #expect(taken.holder == "b")
                #expect(try await store.saveLeasedState(name, value: "{\"n\":2}", holder: "a", now: Self.at(142), lease: .seconds(60)) == false)
                #expect(try await store.saveLeasedState(name, value: "{\"n\":3}", holder: "b", now: Self.at(142), lease: .seconds(60)))

                // A release lets another holder in at once; the state stays.
                try await store.releaseLease(on: name, holder: "a")  // not its lease: nothing happens
                #expect(try await store.acquireLease(on: name, holder: "c", now: Self.at(143), lease: .seconds(60)) == nil)
                try await store.releaseLease(on: name, holder: "b")
                let afterRelease = try #require(try await store.acquireLease(on: name, holder: "c", now: Self.at(143), lease: .seconds(60)))
                #expect(afterRelease.value == "{\"n\":3}")

                // Listing by prefix; a save without a lease row saves nothing.
                _ = try await store.acquireLease(on: "sync/test/Sandbox", holder: "c", now: Self.at(143), lease: .seconds(60))
                _ = try await store.acquireLease(on: "other/x", holder: "c", now: Self.at(143), lease: .seconds(60))
                #expect(try await store.leasedStates(prefix: "sync/test/").map(\.name) == ["sync/test/Production", "sync/test/Sandbox"])
                #expect(try await store.saveLeasedState("sync/none", value: "{}", holder: "c", now: Self.now, lease: .seconds(1)) == false)

                // Removal is fenced too: only the holder deletes, and then the state is gone.
                #expect(try await store.removeLeasedState("sync/test/Sandbox", holder: "b") == false)
                #expect(try await store.removeLeasedState("sync/test/Sandbox", holder: "c"))
                #expect(try await store.leasedStates(prefix: "sync/test/").map(\.name) == ["sync/test/Production"])
                #expect(try await store.removeLeasedState("sync/test/Sandbox", holder: "c") == false)
                await expectLedgerError(.invalidArgument) { try await store.acquireLease(on: "", holder: "c", now: Self.now, lease: .seconds(1)) }
                await expectLedgerError(.invalidArgument) { try await store.acquireLease(on: "x", holder: "", now: Self.now, lease: .seconds(1)) }
            }
        }

        @Test("concurrent takers: exactly one gets a free lease", arguments: LedgerBackend.all)
        func concurrentTakers(backend: LedgerBackend) async throws {
            try await backend.withStore { store async throws in
                // Two ledgers on one store stand for two instances (the memory backend's are separate).
                let one = try await store.open()
                let two = backend.kind == .memory ? one : try await store.open()
                for round in 0..<20 {
                    let name = "race/\(round)"
                    let winners = try await withThrowingTaskGroup(of: Bool.self) { group in
                        for (index, ledger) in [one, two, one, two].enumerated() {
                            group.addTask {
                                let leases: any LeasedStateStore = ledger
                                return try await leases.acquireLease(on: name, holder: "h\(index)", now: Self.now, lease: .seconds(60)) != nil
                            }
                        }
                        return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                    }
                    #expect(winners == 1, "round \(round)")
                }
            }
        }
    }
}

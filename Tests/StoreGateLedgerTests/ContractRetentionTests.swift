import Foundation
import StoreGateCore
@testable import StoreGateLedger
import Testing

extension LedgerTests {
    /// Event retention: the oldest events go, in order, never the newest and never one still
    /// owed to a webhook endpoint; a cursor below them is refused, not silently moved on.
    @Suite("Ledger contract: event retention")
    struct Retention {
        let alice = Purchases.account("alice")
        let bob = Purchases.account("bob")
        static let t = Date(timeIntervalSince1970: 1_800_000_000)
        /// Events are stamped with the real clock: a cutoff an hour ahead makes every one old.
        static var allOld: Date { Date().addingTimeInterval(3600) }

        static func sequences(_ ledger: any Ledger, after cursor: Int64 = 0) async throws -> [Int64] {
            try await Events.drain(ledger, after: cursor).map(\.sequence)
        }

        @Test("the oldest events go in order, never the newest; a cursor below them expires; sequences are not reused", arguments: LedgerBackend.all)
        func oldestFirst(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                for index in 1...5 {
                    try await ledger.record(Purchases.proof(Purchases.nonConsumable("n\(index)")), for: index == 3 ? bob : alice)
                }
                #expect(try await Self.sequences(ledger) == [1, 2, 3, 4, 5])

                // Recorded after the cutoff: kept.
                #expect(try await ledger.pruneEvents(recordedBefore: Date().addingTimeInterval(-3600), limit: 100) == EventPruning(deleted: 0, prunedThrough: 0))
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 2) == EventPruning(deleted: 2, prunedThrough: 2))
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 100) == EventPruning(deleted: 2, prunedThrough: 4))
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 100) == EventPruning(deleted: 0, prunedThrough: 4), "the newest stays")

                #expect(try await ledger.events(after: 0, limit: 100).map(\.sequence) == [5], "0 reads from the oldest kept")
                #expect(try await ledger.lastEventSequence() == 5, "the newest is kept, and named")
                #expect(try await ledger.events(after: 4, limit: 100).map(\.sequence) == [5])
                for expired: Int64 in [1, 3] {
                    let error = await expectLedgerError(.cursorExpired) { try await ledger.events(after: expired, limit: 100) }
                    #expect(error?.reason.contains("through 4") == true, "\(String(describing: error))")
                }
                #expect(try await ledger.timeline(for: alice, before: nil, limit: 100).map(\.sequence) == [5])
                #expect(try await ledger.timeline(for: bob, before: nil, limit: 100).isEmpty)

                try await ledger.record(Purchases.proof(Purchases.nonConsumable("n6")), for: bob)
                #expect(try await Self.sequences(ledger, after: 4) == [5, 6], "the next event follows the newest")
                #expect(try await ledger.lastEventSequence() == 6)
                #expect(try await ledger.timeline(for: bob, before: nil, limit: 100).map(\.sequence) == [6])
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 100) == EventPruning(deleted: 1, prunedThrough: 5))

                await expectLedgerError(.invalidArgument) { try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 0) }
                await expectLedgerError(.invalidArgument) { try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 100_001) }
            }
        }

        @Test("retention on a ledger without events deletes nothing and leaves the mark at 0: the first events stay readable and go later", arguments: LedgerBackend.all)
        func emptyLedger(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 4) == EventPruning(deleted: 0, prunedThrough: 0))
                #expect(try await ledger.lastEventSequence() == 0, "an empty stream ends at 0")
                for index in 1...3 {
                    try await ledger.record(Purchases.proof(Purchases.nonConsumable("n\(index)")), for: alice)
                }
                #expect(try await Self.sequences(ledger, after: 1) == [2, 3], "no cursor expired")
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 4) == EventPruning(deleted: 2, prunedThrough: 2))
                #expect(try await Self.sequences(ledger, after: 2) == [3])
            }
        }

        @Test("an event still owed to an endpoint holds retention back, and so does one not yet fanned out", arguments: LedgerBackend.all)
        func owedEvents(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let store = Deliveries.store(ledger)
                #expect(try await Deliveries.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t) == 0)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a1")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a2")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("b1")), for: bob)
                #expect(try await Deliveries.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t) == 3)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a3")), for: alice)
                try await Events.settle(ledger)

                // Every delivery pending: nothing goes.
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 100).deleted == 0)

                // a1 delivered: it goes, with its delivery; a2 is still owed.
                let first = try await store.claim(endpoint: "app", now: Self.t, limit: 10, lease: .seconds(30), holder: "one")
                #expect(first.map(\.event.sequence) == [1, 3])
                #expect(try await store.complete(endpoint: "app", sequence: 1, holder: "one", result: .delivered(status: 200), at: Self.t))
                #expect(try await store.complete(endpoint: "app", sequence: 3, holder: "one", result: .failed(status: 500, error: "HTTP 500"), at: Self.t))
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 100) == EventPruning(deleted: 1, prunedThrough: 1))
                #expect(try await store.deliveries(endpoint: "app", status: nil, after: 0, limit: 100).map(\.sequence) == [2, 3])

                // a2 delivered; b1's delivery failed for good: it holds retention until redelivered.
                let second = try await store.claim(endpoint: "app", now: Self.t, limit: 10, lease: .seconds(30), holder: "one")
                #expect(second.map(\.event.sequence) == [2])
                #expect(try await store.complete(endpoint: "app", sequence: 2, holder: "one", result: .delivered(status: 200), at: Self.t))
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 100) == EventPruning(deleted: 1, prunedThrough: 2))
                #expect(try await store.redeliver(endpoint: "app", sequence: 3, at: Self.t))
                let third = try await store.claim(endpoint: "app", now: Self.t, limit: 10, lease: .seconds(30), holder: "one")
                #expect(third.map(\.event.sequence) == [3])
                #expect(try await store.complete(endpoint: "app", sequence: 3, holder: "one", result: .delivered(status: 200), at: Self.t))

                // a3 (sequence 4) is the newest and not fanned out yet: the stream stops before it.
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 100) == EventPruning(deleted: 1, prunedThrough: 3))
                #expect(try await store.deliveries(endpoint: nil, status: nil, after: 0, limit: 100).isEmpty)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("b2")), for: bob)
                try await Events.settle(ledger)
                #expect(try await ledger.pruneEvents(recordedBefore: Self.allOld, limit: 100).deleted == 0, "4 is after the endpoint's cursor")
                #expect(try await Deliveries.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t) == 2)
                #expect(try await store.deliveries(endpoint: "app", status: .pending, after: 0, limit: 100).map(\.sequence) == [4, 5])
                #expect(try await store.redeliver(endpoint: "app", sequence: 1, at: Self.t) == false, "a deleted event cannot be sent again")
            }
        }
    }
}

import Foundation
import StoreGateCore
@testable import StoreGateLedger
import Testing

extension LedgerTests {
    /// Webhook deliveries kept in the ledger: fan-out from the cursor, per-account order,
    /// leases, retries, dead deliveries and redelivery — the same on every backend.
    @Suite("Ledger contract: deliveries")
    struct Deliveries {
        let alice = Purchases.account("alice")
        let bob = Purchases.account("bob")
        static let t = Date(timeIntervalSince1970: 1_800_000_000)

        /// Fans out once every event committed before is numbered (see ``Events/settle(_:)``).
        static func fanOut(_ store: any EventDeliveryStore, endpoint: String, types: Set<String>?, limit: Int, now: Date) async throws -> Int {
            try await Events.settle(store)
            return try await store.fanOut(endpoint: endpoint, types: types, limit: limit, now: now)
        }

        static func store(_ ledger: any Ledger) -> any EventDeliveryStore {
            ledger
        }

        @Test("a new endpoint starts at the end; later events fan out once, filtered by type", arguments: LedgerBackend.all)
        func fanOut(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let store = Self.store(ledger)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("before")), for: alice)
                #expect(try await Self.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t) == 0)
                #expect(try await Self.fanOut(store, endpoint: "coins", types: ["consumable.consumed"], limit: 100, now: Self.t) == 0)
                try await ledger.record(Purchases.proof(Purchases.consumable("c1", quantity: 2)), for: alice)
                _ = try await ledger.consume("coins", quantity: 1, idempotencyKey: "k", for: alice, at: Self.t)
                #expect(try await Self.fanOut(store, endpoint: "app", types: nil, limit: 1, now: Self.t) == 1)
                #expect(try await Self.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t) == 1)
                #expect(try await Self.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t) == 0)
                #expect(try await Self.fanOut(store, endpoint: "coins", types: ["consumable.consumed"], limit: 100, now: Self.t) == 2)
                let app = try await store.deliveries(endpoint: "app", status: nil, after: 0, limit: 100)
                #expect(app.map(\.eventType) == ["consumable.credited", "consumable.consumed"])
                #expect(app.allSatisfy { $0.status == .pending && $0.attempts == 0 && $0.account == alice })
                #expect(try await store.deliveries(endpoint: "coins", status: nil, after: 0, limit: 100).map(\.eventType) == ["consumable.consumed"])
                #expect(try await store.deliveries(endpoint: nil, status: .pending, after: 0, limit: 100).count == 3)
                let counts = try await store.deliveryCounts()
                #expect(counts["app"]?[.pending] == 2)
                #expect(counts["coins"]?[.pending] == 1)
            }
        }

        @Test("an account's events go one at a time, in order; other accounts do not wait", arguments: LedgerBackend.all)
        func perAccountOrder(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let store = Self.store(ledger)
                _ = try await Self.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a1")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.consumable("a2")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("b1")), for: bob)
                _ = try await Self.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t)

                let first = try await store.claim(endpoint: "app", now: Self.t, limit: 10, lease: .seconds(30), holder: "one")
                #expect(first.map(\.event.transactionId) == ["a1", "b1"])
                #expect(first.allSatisfy { $0.attempts == 0 && $0.firstAttemptAt == nil })
                // Leased: nobody else gets them, and a2 waits behind a1.
                #expect(try await store.claim(endpoint: "app", now: Self.t, limit: 10, lease: .seconds(30), holder: "two").isEmpty)

                let a1 = try #require(first.first?.event.sequence), b1 = try #require(first.last?.event.sequence)
                #expect(try await store.complete(endpoint: "app", sequence: b1, holder: "one", result: .delivered(status: 200), at: Self.t))
                #expect(try await store.complete(
                    endpoint: "app", sequence: a1, holder: "one", result: .retry(next: Self.t.addingTimeInterval(60), status: 503, error: "HTTP 503"), at: Self.t))
                // a1 is not due yet, and a2 still waits behind it.
                #expect(try await store.claim(endpoint: "app", now: Self.t.addingTimeInterval(59), limit: 10, lease: .seconds(30), holder: "one").isEmpty)
                let retried = try await store.claim(endpoint: "app", now: Self.t.addingTimeInterval(61), limit: 10, lease: .seconds(30), holder: "one")
                #expect(retried.map(\.event.transactionId) == ["a1"])
                #expect(retried.first?.attempts == 1)
                #expect(retried.first?.firstAttemptAt == Self.t)
                #expect(try await store.complete(endpoint: "app", sequence: a1, holder: "one", result: .delivered(status: 204), at: Self.t.addingTimeInterval(62)))
                let next = try await store.claim(endpoint: "app", now: Self.t.addingTimeInterval(62), limit: 10, lease: .seconds(30), holder: "one")
                #expect(next.map(\.event.transactionId) == ["a2"])

                let all = try await store.deliveries(endpoint: "app", status: .delivered, after: 0, limit: 10)
                #expect(all.map(\.sequence) == [a1, b1])
                #expect(all.first?.attempts == 2)
                #expect(all.first?.lastStatus == 204)
                #expect(all.first?.deliveredAt == Self.t.addingTimeInterval(62))
            }
        }

        @Test("a lease that runs out passes the delivery on; the old holder's result no longer counts", arguments: LedgerBackend.all)
        func leases(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let store = Self.store(ledger)
                _ = try await Self.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a1")), for: alice)
                _ = try await Self.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t)
                let one = try await store.claim(endpoint: "app", now: Self.t, limit: 10, lease: .seconds(30), holder: "killed")
                #expect(one.count == 1)
                #expect(try await store.claim(endpoint: "app", now: Self.t.addingTimeInterval(29), limit: 10, lease: .seconds(30), holder: "next").isEmpty)
                let taken = try await store.claim(endpoint: "app", now: Self.t.addingTimeInterval(31), limit: 10, lease: .seconds(30), holder: "next")
                #expect(taken.map(\.event.id) == one.map(\.event.id))
                let sequence = try #require(one.first?.event.sequence)
                #expect(try await !store.complete(endpoint: "app", sequence: sequence, holder: "killed", result: .delivered(status: 200), at: Self.t))
                #expect(try await store.complete(endpoint: "app", sequence: sequence, holder: "next", result: .delivered(status: 200), at: Self.t))
                #expect(try await !store.complete(endpoint: "app", sequence: sequence, holder: "next", result: .delivered(status: 200), at: Self.t))
            }
        }

        @Test("a delivery that failed for good stops blocking its account, is listed, and can be sent again", arguments: LedgerBackend.all)
        func failedAndRedelivered(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let store = Self.store(ledger)
                _ = try await Self.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a1")), for: alice)
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("a2", product: "pro.extra")), for: alice)
                _ = try await Self.fanOut(store, endpoint: "app", types: nil, limit: 100, now: Self.t)
                let first = try #require(try await store.claim(endpoint: "app", now: Self.t, limit: 10, lease: .seconds(30), holder: "h").first)
                #expect(try await store.complete(
                    endpoint: "app", sequence: first.event.sequence, holder: "h", result: .failed(status: nil, error: #"timed out: "quoted", {braced} \ NULL"#), at: Self.t))
                let failed = try await store.deliveries(endpoint: "app", status: .failed, after: 0, limit: 10)
                #expect(failed.map(\.eventId) == [first.event.id])
                #expect(failed.first?.lastError == #"timed out: "quoted", {braced} \ NULL"#)
                #expect(failed.first?.lastStatus == nil)
                #expect(try await store.claim(endpoint: "app", now: Self.t, limit: 10, lease: .seconds(30), holder: "h").map(\.event.transactionId) == ["a2"])

                #expect(try await store.redeliver(endpoint: "app", sequence: first.event.sequence, at: Self.t.addingTimeInterval(5)))
                #expect(try await !store.redeliver(endpoint: "app", sequence: 999_999, at: Self.t))
                #expect(try await !store.redeliver(endpoint: "other", sequence: first.event.sequence, at: Self.t))
                let again = try await store.claim(endpoint: "app", now: Self.t.addingTimeInterval(5), limit: 10, lease: .seconds(30), holder: "h")
                #expect(again.map(\.event.id) == [first.event.id])
                #expect(again.first?.attempts == 0)
                #expect(try await store.deliveries(endpoint: "app", status: .failed, after: 0, limit: 10).isEmpty)
            }
        }

        @Test("endpoint names and pages are checked", arguments: LedgerBackend.all)
        func arguments(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let store = Self.store(ledger)
                await expectLedgerError(.invalidArgument) { try await Self.fanOut(store, endpoint: "", types: nil, limit: 10, now: Self.t) }
                await expectLedgerError(.invalidArgument) { try await Self.fanOut(store, endpoint: String(repeating: "e", count: 65), types: nil, limit: 10, now: Self.t) }
                await expectLedgerError(.invalidArgument) { try await store.claim(endpoint: "app", now: Self.t, limit: 0, lease: .seconds(1), holder: "h") }
                await expectLedgerError(.invalidArgument) { try await store.deliveries(endpoint: nil, status: nil, after: 0, limit: 1001) }
            }
        }
    }
}

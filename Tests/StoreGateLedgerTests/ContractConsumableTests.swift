import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Consumables: balances, atomic idempotent consumption, refunds before and after use.
    @Suite("Ledger contract: consumables")
    struct Consumables {
        let alice = Purchases.account("alice")
        let bob = Purchases.account("bob")

        @Test("a balance adds up purchased quantities and consuming takes from it", arguments: LedgerBackend.all)
        func balanceAndConsume(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 3)]), for: alice)
                try await ledger.record(Purchases.proof([Purchases.consumable("c2", quantity: 2, at: Purchases.date(1))]), for: alice)
                #expect(try await ledger.balance(of: "coins", for: alice) == ConsumableBalance(productId: "coins", purchased: 5, refunded: 0, consumed: 0))
                let receipt = try await ledger.consume("coins", quantity: 2, idempotencyKey: "k1", for: alice, at: Purchases.date(2))
                #expect(receipt.remaining == 3)
                #expect(!receipt.isReplay)
                #expect(receipt.consumedAt == Purchases.date(2))
                let balance = try await ledger.balance(of: "coins", for: alice)
                #expect(balance.available == 3)
                #expect(balance.consumed == 2)
                let entitlement = try await ledger.entitlements(for: alice, at: Purchases.date(3)).consumables.first
                #expect(entitlement?.balance?.available == 3)
                #expect(entitlement?.isEntitled == true)
                #expect(entitlement?.transactions.map(\.transactionId) == ["c1", "c2"])
            }
        }

        @Test("consuming more than the balance is refused and consumes nothing", arguments: LedgerBackend.all)
        func insufficientBalance(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 2)]), for: alice)
                let error = await expectLedgerError(.insufficientBalance) {
                    try await ledger.consume("coins", quantity: 3, idempotencyKey: "k1", for: alice, at: Purchases.date(1))
                }
                #expect(error?.available == 2)
                #expect(try await ledger.balance(of: "coins", for: alice).available == 2)
                let never = await expectLedgerError(.insufficientBalance) {
                    try await ledger.consume("gems", quantity: 1, idempotencyKey: "k2", for: alice, at: Purchases.date(1))
                }
                #expect(never?.available == 0)
                await expectLedgerError(.insufficientBalance) {
                    try await ledger.consume("coins", quantity: 1, idempotencyKey: "k3", for: bob, at: Purchases.date(1))
                }
                // The refused key is free to use once the balance allows it.
                #expect(try await ledger.consume("coins", quantity: 2, idempotencyKey: "k1", for: alice, at: Purchases.date(1)).remaining == 0)
            }
        }

        @Test("the same idempotency key consumes once; reusing it for another quantity is refused", arguments: LedgerBackend.all)
        func idempotencyKeys(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 5)]), for: alice)
                try await ledger.record(Purchases.proof([Purchases.consumable("c2", quantity: 5)]), for: bob)
                let first = try await ledger.consume("coins", quantity: 2, idempotencyKey: "order-1", for: alice, at: Purchases.date(1))
                let again = try await ledger.consume("coins", quantity: 2, idempotencyKey: "order-1", for: alice, at: Purchases.date(2))
                #expect(again.isReplay)
                #expect(again.remaining == first.remaining)
                #expect(again.consumedAt == first.consumedAt)
                #expect(try await ledger.balance(of: "coins", for: alice).available == 3)
                await expectLedgerError(.idempotencyKeyReused) {
                    try await ledger.consume("coins", quantity: 1, idempotencyKey: "order-1", for: alice, at: Purchases.date(2))
                }
                await expectLedgerError(.idempotencyKeyReused) {
                    try await ledger.consume("gems", quantity: 2, idempotencyKey: "order-1", for: alice, at: Purchases.date(2))
                }
                // Keys belong to an account: bob's "order-1" is his own.
                #expect(try await !ledger.consume("coins", quantity: 2, idempotencyKey: "order-1", for: bob, at: Purchases.date(2)).isReplay)
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        static let invalidConsumptions: [(String, Int, String)] = [
            ("coins", 0, "k"), ("coins", -1, "k"), ("coins", 1, ""), ("", 1, "k"),
            ("coins", 1, String(repeating: "k", count: 257)), ("coins", 2_000_000, "k"),
        ]

        @Test("malformed consumptions are refused with invalid_argument", arguments: invalidConsumptions)
        func invalidConsumption(product: String, quantity: Int, key: String) async throws {
            for backend in LedgerBackend.all {
                try await backend.withLedger { ledger async throws in
                    try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 5)]), for: alice)
                    await expectLedgerError(.invalidArgument) {
                        try await ledger.consume(product, quantity: quantity, idempotencyKey: key, for: alice, at: Purchases.date(1))
                    }
                    #expect(try await ledger.balance(of: "coins", for: alice).available == 5)
                }
            }
        }

        @Test("a refund before use removes the units from the balance", arguments: LedgerBackend.all)
        func refundBeforeUse(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 3), Purchases.consumable("c2", quantity: 1)]), for: alice)
                let refund = Purchases.proof([Purchases.consumable("c1", quantity: 3, revoked: Purchases.date(2), signed: Purchases.date(2))])
                try await ledger.record(refund, for: alice)
                #expect(try await ledger.balance(of: "coins", for: alice) == ConsumableBalance(productId: "coins", purchased: 1, refunded: 3, consumed: 0))
                await expectLedgerError(.insufficientBalance) {
                    try await ledger.consume("coins", quantity: 2, idempotencyKey: "k", for: alice, at: Purchases.date(3))
                }
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        @Test("a refund of units already consumed is kept as refund debt, never dropped", arguments: LedgerBackend.all)
        func refundAfterUse(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 1), Purchases.consumable("c2", quantity: 1)]), for: alice)
                try await ledger.consume("coins", quantity: 2, idempotencyKey: "k", for: alice, at: Purchases.date(1))
                let refund = Purchases.notification(
                    "n-refund", type: "REFUND", signed: Purchases.date(5),
                    transaction: Purchases.consumable("c2", quantity: 1, revoked: Purchases.date(5), signed: Purchases.date(5))
                )
                #expect(try await ledger.apply(refund).account == alice)
                let balance = try await ledger.balance(of: "coins", for: alice)
                #expect(balance == ConsumableBalance(productId: "coins", purchased: 1, refunded: 1, consumed: 2))
                #expect(balance.refundDebt == 1)
                #expect(balance.available == 0)
                let entitlement = try await ledger.entitlements(for: alice, at: Purchases.date(6)).consumables.first
                #expect(entitlement?.notifications.map(\.notificationUUID) == ["n-refund"])
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        @Test("200 concurrent consumptions at a balance of 50: exactly 50 succeed", arguments: LedgerBackend.all)
        func concurrentConsumption(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let account = alice
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 50)]), for: account)
                let results = await withTaskGroup(of: Result<ConsumptionReceipt, LedgerError>.self) { group in
                    for index in 0..<200 {
                        group.addTask {
                            do throws(LedgerError) { return .success(try await ledger.consume("coins", quantity: 1, idempotencyKey: "k\(index)", for: account, at: Purchases.date(1))) }
                            catch { return .failure(error) }
                        }
                    }
                    return await group.reduce(into: []) { $0.append($1) }
                }
                let successes = results.filter { if case .success = $0 { true } else { false } }
                let refusals = results.filter { if case .failure(let error) = $0 { error.code == .insufficientBalance } else { false } }
                #expect(successes.count == 50)
                #expect(refusals.count == 150)
                #expect(try await ledger.balance(of: "coins", for: account) == ConsumableBalance(productId: "coins", purchased: 50, refunded: 0, consumed: 50))
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }
    }
}

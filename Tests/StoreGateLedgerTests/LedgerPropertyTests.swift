import Foundation
import PropertyBased
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Random interleavings of purchases, renewals, refunds and consumptions keep the ledger's
    /// invariants, and notifications end in the same state whatever their delivery order.
    @Suite("Ledger properties")
    struct Properties {
        static let accounts = ["alice", "bob", "carol"].map(Purchases.account)

        /// Twelve purchases: five consumables, three non-consumables, two subscription families
        /// of two periods each.
        static let items: [VerifiedTransaction] = (0..<12).map { index in
            switch index {
            case 0..<5:
                return Purchases.consumable("c\(index)", quantity: index % 3 + 1, at: Purchases.date(Double(index)))
            case 5..<8:
                return Purchases.nonConsumable("n\(index)", product: index == 7 ? "extra" : "pro.lifetime", at: Purchases.date(Double(index)))
            default:
                let family = index < 10 ? "f0" : "f1"
                let product = index < 10 ? "pro.monthly" : "plus.monthly"
                return Purchases.period("p\(index)", original: family, product: product, start: index % 2 == 0 ? 0 : 30, group: index < 10 ? "pro" : "plus")
            }
        }

        static func item(_ number: Int) -> VerifiedTransaction { items[number % items.count] }

        /// Notifications are a function of their UUID, as Apple's are.
        static func refund(_ item: Int) -> VerifiedNotification {
            let base = Self.item(item)
            let signed = Purchases.date(100 + Double(item % items.count))
            return Purchases.notification("refund-\(base.transactionId)", type: "REFUND", signed: signed, transaction: revoked(base, at: signed))
        }

        static func reversal(_ item: Int) -> VerifiedNotification {
            let base = Self.item(item)
            return Purchases.notification("reversed-\(base.transactionId)", type: "REFUND_REVERSED", signed: Purchases.date(200 + Double(item % items.count)), transaction: base)
        }

        static func renewal(_ item: Int) -> VerifiedNotification {
            let base = Self.item(8 + item % 4)
            return Purchases.notification("renew-\(base.transactionId)", type: "DID_RENEW", signed: base.signedDate, transaction: base,
                                          renewal: Purchases.renewal(original: base.originalTransactionId, product: base.productId, signed: base.signedDate))
        }

        static func revoked(_ transaction: VerifiedTransaction, at date: Date) -> VerifiedTransaction {
            Purchases.transaction(
                transaction.transactionId, original: transaction.originalTransactionId, product: transaction.productId,
                type: transaction.productType, quantity: transaction.quantity, purchased: transaction.purchaseDate,
                expires: transaction.expiresDate, revoked: date, group: transaction.subscriptionGroupIdentifier, signed: date
            )
        }

        enum Operation {
            case record(AccountID, [VerifiedTransaction])
            case notify(VerifiedNotification)
            case consume(AccountID, quantity: Int, key: String)

            init(_ code: Int) {
                let rest = code / 6
                let account = Properties.accounts[rest % 3]
                switch code % 6 {
                case 0: self = .record(account, [Properties.item(rest / 3)])
                case 1: self = .record(account, [Properties.item(rest / 3), Properties.item(rest / 36)])
                case 2: self = .notify(Properties.refund(rest))
                case 3: self = .consume(account, quantity: (rest / 3) % 3 + 1, key: "k\((rest / 9) % 6)")
                case 4: self = .notify(Properties.reversal(rest))
                default: self = .notify(Properties.renewal(rest))
                }
            }
        }

        static func checks(for backend: LedgerBackend) -> Int {
            switch backend.kind {
            case .memory: 100
            case .sqlite: 25
            case .postgres: 6
            }
        }

        @Test("any interleaving keeps balances non-negative, one owner per purchase, and order-independent notifications", arguments: LedgerBackend.all)
        func invariants(backend: LedgerBackend) async {
            await propertyCheck(count: Self.checks(for: backend), input: Gen.int(in: 0...9_999).array(of: 1...30)) { codes in
                try await Self.check(codes.map(Operation.init), on: backend)
            }
        }

        static func check(_ operations: [Operation], on backend: LedgerBackend) async throws {
            let run: Run = try await backend.withLedger { ledger async throws in
                var owners: [String: AccountID] = [:]          // family → first account that recorded it
                var keys: [AccountID: [String: Int]] = [:]     // idempotency keys that consumed, with their quantity
                var recorded: [(AccountID, VerifiedProof)] = []
                var notifications: [VerifiedNotification] = []
                for operation in operations {
                    switch operation {
                    case .record(let account, let transactions):
                        let proof = Purchases.proof(transactions)
                        let takenByOther = transactions.contains { owners[$0.originalTransactionId].map { $0 != account } ?? false }
                        if takenByOther {
                            await expectLedgerError(.ownedByAnotherAccount) { try await ledger.record(proof, for: account) }
                        } else {
                            try await ledger.record(proof, for: account)
                            for transaction in transactions { owners[transaction.originalTransactionId] = account }
                            recorded.append((account, proof))
                        }
                    case .notify(let notification):
                        try await ledger.apply(notification)
                        notifications.append(notification)
                    case .consume(let account, let quantity, let key):
                        let before = try await ledger.balance(of: "coins", for: account)
                        let call = { try await ledger.consume("coins", quantity: quantity, idempotencyKey: key, for: account, at: Purchases.date(300)) }
                        if let earlier = keys[account]?[key] {
                            if earlier == quantity {
                                #expect(try await call().isReplay)
                            } else {
                                await expectLedgerError(.idempotencyKeyReused, call)
                            }
                        } else if before.available >= quantity {
                            let receipt = try await call()
                            #expect(!receipt.isReplay)
                            #expect(receipt.remaining == before.available - quantity)
                            keys[account, default: [:]][key] = quantity
                        } else {
                            await expectLedgerError(.insufficientBalance, call)
                        }
                        let after = try await ledger.balance(of: "coins", for: account)
                        #expect(after.consumed <= after.purchased + after.refunded)
                    }
                    let report = try await ledger.checkIntegrity()
                    #expect(report.isHealthy, "\(report.problems)")
                }
                // One owner per purchase: the first account that recorded its family.
                var seen: Set<String> = []
                for account in accounts {
                    let held = try await ledger.entitlements(for: account, at: Purchases.date(300))
                    let ids = (held.consumables + held.nonConsumables).flatMap(\.transactions) + held.subscriptions.flatMap(\.transactions)
                    for transaction in ids {
                        #expect(!seen.contains(transaction.transactionId), "\(transaction.transactionId) is held by two accounts")
                        seen.insert(transaction.transactionId)
                        #expect(owners[transaction.originalTransactionId] == account)
                    }
                }
                return Run(recorded: recorded, notifications: notifications, final: try await Self.states(ledger))
            }
            let recorded = run.recorded
            let notifications = run.notifications

            // The same records with the notifications delivered forwards, or backwards and first.
            let forward = try await backend.withLedger { ledger async throws in
                for (account, proof) in recorded { try await ledger.record(proof, for: account) }
                for notification in notifications { try await ledger.apply(notification) }
                return try await Self.snapshot(ledger)
            }
            let backward = try await backend.withLedger { ledger async throws in
                for notification in notifications.reversed() { try await ledger.apply(notification) }
                for (account, proof) in recorded { try await ledger.record(proof, for: account) }
                return try await Self.snapshot(ledger)
            }
            #expect(forward.entitlements == backward.entitlements)
            #expect(forward.transactions == backward.transactions)
            #expect(forward.transactions == run.final)
        }

        struct Run: Sendable {
            var recorded: [(AccountID, VerifiedProof)]
            var notifications: [VerifiedNotification]
            var final: [String: RecordedTransaction]
        }

        struct Snapshot: Equatable, Sendable {
            var entitlements: [Entitlements]
            var transactions: [String: RecordedTransaction]
        }

        static func states(_ ledger: any Ledger) async throws -> [String: RecordedTransaction] {
            var states: [String: RecordedTransaction] = [:]
            for item in items {
                states[item.transactionId] = try await ledger.transaction(item.transactionId, in: .production)
            }
            return states
        }

        static func snapshot(_ ledger: any Ledger) async throws -> Snapshot {
            var entitlements: [Entitlements] = []
            for account in accounts { entitlements.append(try await ledger.entitlements(for: account, at: Purchases.date(300))) }
            return Snapshot(entitlements: entitlements, transactions: try await states(ledger))
        }
    }
}

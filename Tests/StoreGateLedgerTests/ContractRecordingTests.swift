import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Recording: idempotency, ownership, account tokens, environments, the product catalog.
    @Suite("Ledger contract: recording")
    struct Recording {
        let alice = Purchases.account("alice")
        let bob = Purchases.account("bob")

        @Test("recording a proof records each transaction once, and recording it again changes nothing", arguments: LedgerBackend.all)
        func idempotentRecording(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let proof = Purchases.proof([
                    Purchases.nonConsumable("t1"),
                    Purchases.consumable("c1", quantity: 3),
                ])
                let first = try await ledger.record(proof, for: alice)
                #expect(first.newTransactionIds == ["c1", "t1"])
                #expect(!first.isDuplicate)
                let second = try await ledger.record(proof, for: alice)
                #expect(second.isDuplicate)
                #expect(second.unchangedTransactionIds == ["c1", "t1"])

                let entitlements = try await ledger.entitlements(for: alice, at: Purchases.date(1))
                #expect(entitlements.ownedNonConsumables == ["pro.lifetime"])
                #expect(entitlements.balance(of: "coins") == 3)
                let recorded = try await ledger.transaction("t1", in: .production)
                #expect(recorded?.account == alice)
                #expect(recorded?.productType == .nonConsumable)
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        @Test("another account recording an owned purchase is refused and nothing of its proof is recorded", arguments: LedgerBackend.all)
        func receiptSharingIsRefused(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.nonConsumable("t1")), for: alice)
                let shared = Purchases.proof([Purchases.consumable("c9", quantity: 5), Purchases.nonConsumable("t1")])
                let error = await expectLedgerError(.ownedByAnotherAccount) {
                    try await ledger.record(shared, for: bob)
                }
                #expect(error?.transactionId == "t1")
                let bobs = try await ledger.entitlements(for: bob, at: Purchases.date(1))
                #expect(bobs.ownedNonConsumables.isEmpty)
                #expect(bobs.balance(of: "coins") == 0)
                #expect(try await ledger.transaction("c9", in: .production) == nil)
                #expect(try await ledger.transaction("t1", in: .production)?.account == alice)
                #expect(try await ledger.entitlements(for: alice, at: Purchases.date(1)).ownedNonConsumables == ["pro.lifetime"])
            }
        }

        @Test("renewals and restores accrue to the account owning the original purchase", arguments: LedgerBackend.all)
        func renewalsAccrueToTheOwner(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0)), for: alice)
                let renewal = Purchases.period("s2", original: "s1", start: 30)
                await expectLedgerError(.ownedByAnotherAccount) {
                    try await ledger.record(Purchases.proof(renewal), for: bob)
                }
                let outcome = try await ledger.record(Purchases.proof(renewal), for: alice)
                #expect(outcome.newTransactionIds == ["s2"])
                let restore = Purchases.proof([Purchases.period("s1", original: "s1", start: 0), renewal], kind: .appReceipt)
                #expect(try await ledger.record(restore, for: alice).isDuplicate)
                await expectLedgerError(.ownedByAnotherAccount) {
                    try await ledger.record(restore, for: bob)
                }
                let status = try await ledger.entitlements(for: alice, at: Purchases.date(45)).subscription(inGroup: "pro")
                #expect(status?.state == .active)
                #expect(status?.transactions.map(\.transactionId) == ["s1", "s2"])
                #expect(try await ledger.entitlements(for: bob, at: Purchases.date(45)).subscriptions.isEmpty)
            }
        }

        static let namespace = UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!
        static let uuidAccount = "6F9619FF-8B86-D011-B42D-00CF4FC964FF"

        /// (policy, account id, token on the transaction, accepted)
        static let tokenCases: [(AppAccountTokenPolicy, String, UUID?, Bool)] = [
            (.accountIDIsUUID, uuidAccount, UUID(uuidString: uuidAccount), true),
            (.accountIDIsUUID, uuidAccount.lowercased(), UUID(uuidString: uuidAccount), true),
            (.accountIDIsUUID, uuidAccount, UUID(uuidString: "00000000-0000-4000-8000-000000000001"), false),
            (.accountIDIsUUID, "alice", UUID(uuidString: uuidAccount), false),
            (.accountIDIsUUID, "alice", nil, true),
            (.nameBased(namespace: namespace), "alice", AppAccountTokenPolicy.nameBased(namespace: namespace).token(for: Purchases.account("alice")), true),
            (.nameBased(namespace: namespace), "bob", AppAccountTokenPolicy.nameBased(namespace: namespace).token(for: Purchases.account("alice")), false),
        ]

        @Test("a transaction carrying an appAccountToken is recorded only for the account whose token it is", arguments: tokenCases)
        func appAccountToken(policy: AppAccountTokenPolicy, accountName: String, token: UUID?, accepted: Bool) async throws {
            for backend in [LedgerBackend.memory, .sqlite] {
                try await backend.withLedger(LedgerConfiguration(accountTokenPolicy: policy)) { ledger async throws in
                    let proof = Purchases.proof(Purchases.nonConsumable("t1", token: token))
                    let account = Purchases.account(accountName)
                    if accepted {
                        #expect(try await ledger.record(proof, for: account).newTransactionIds == ["t1"])
                    } else {
                        await expectLedgerError(.appAccountTokenMismatch) { try await ledger.record(proof, for: account) }
                        #expect(try await ledger.transaction("t1", in: .production) == nil)
                    }
                }
            }
        }

        @Test("the account-token check is the same on every backend", arguments: LedgerBackend.all)
        func appAccountTokenOnEveryBackend(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let token = UUID(uuidString: Self.uuidAccount)
                await expectLedgerError(.appAccountTokenMismatch) {
                    try await ledger.record(Purchases.proof(Purchases.nonConsumable("t1", token: token)), for: alice)
                }
                let owner = Purchases.account(Self.uuidAccount)
                #expect(try await ledger.record(Purchases.proof(Purchases.nonConsumable("t1", token: token)), for: owner).newTransactionIds == ["t1"])
                #expect(try await ledger.transaction("t1", in: .production)?.appAccountToken == token)
            }
        }

        @Test("name-based tokens are RFC 9562 version-5 UUIDs")
        func version5Vector() {
            let dns = UUID(uuidString: "6BA7B810-9DAD-11D1-80B4-00C04FD430C8")!
            let token = AppAccountTokenPolicy.nameBased(namespace: dns).token(for: Purchases.account("www.example.com"))
            #expect(token == UUID(uuidString: "2ED6657D-E927-568B-95E1-2665A8AEA6A2"))
        }

        @Test("the same transaction id in two environments is two purchases", arguments: LedgerBackend.all)
        func environmentsAreSeparate(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.consumable("c1", quantity: 2)]), for: alice)
                let sandbox = Purchases.proof([Purchases.consumable("c1", quantity: 5, environment: .sandbox)], environment: .sandbox)
                #expect(try await ledger.record(sandbox, for: bob).newTransactionIds == ["c1"])
                #expect(try await ledger.balance(of: "coins", for: alice).available == 2)
                #expect(try await ledger.balance(of: "coins", for: bob).available == 5)
                #expect(try await ledger.transaction("c1", in: .sandbox)?.account == bob)
            }
        }

        @Test("a transaction from another environment than its proof is refused", arguments: LedgerBackend.all)
        func environmentMismatch(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let proof = Purchases.proof([Purchases.consumable("c1", environment: .sandbox)], environment: .production)
                await expectLedgerError(.environmentMismatch) { try await ledger.record(proof, for: alice) }
                #expect(try await ledger.transaction("c1", in: .sandbox) == nil)
            }
        }

        @Test("a transaction id seen again with another original transaction id or product is refused", arguments: LedgerBackend.all)
        func inconsistentTransaction(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.period("s2", original: "s1", start: 30)), for: alice)
                await expectLedgerError(.inconsistentTransaction) {
                    try await ledger.record(Purchases.proof(Purchases.period("s2", original: "s2", start: 30)), for: alice)
                }
                await expectLedgerError(.inconsistentTransaction) {
                    try await ledger.record(Purchases.proof(Purchases.period("s2", original: "s1", product: "other", start: 30)), for: alice)
                }
            }
        }

        static let invalidTransactions: [(String, VerifiedTransaction)] = [
            ("quantity 0", Purchases.consumable("c1", quantity: 0)),
            ("negative quantity", Purchases.consumable("c1", quantity: -3)),
            ("empty transaction id", Purchases.consumable("")),
            ("empty product id", Purchases.transaction("c1", product: "")),
            ("oversized transaction id", Purchases.consumable(String(repeating: "9", count: 300))),
        ]

        @Test("malformed transactions are refused with invalid_argument", arguments: invalidTransactions)
        func malformedTransactions(name: String, transaction: VerifiedTransaction) async throws {
            for backend in LedgerBackend.all {
                try await backend.withLedger { ledger async throws in
                    await expectLedgerError(.invalidArgument) { try await ledger.record(Purchases.proof([transaction]), for: alice) }
                    #expect(try await ledger.checkIntegrity().isHealthy)
                }
            }
        }

        @Test("receipts take product types and groups from the catalog, with fallbacks", arguments: LedgerBackend.all)
        func catalog(backend: LedgerBackend) async throws {
            let catalog = ProductCatalog(products: [
                "coins": .init(type: .consumable),
                "pro.yearly": .init(type: .autoRenewable, subscriptionGroup: "pro"),
                "season.pass": .init(type: .nonRenewing),
            ])
            try await backend.withLedger(LedgerConfiguration(catalog: catalog)) { ledger async throws in
                let receipt = Purchases.proof([
                    Purchases.transaction("r1", product: "coins", quantity: 4, source: .appReceipt),
                    Purchases.transaction("r2", product: "gems", source: .appReceipt),
                    Purchases.transaction("r3", product: "mystery.monthly", expires: Purchases.date(30), source: .appReceipt),
                    Purchases.transaction("r4", product: "pro.yearly", expires: Purchases.date(365), source: .appReceipt),
                    Purchases.transaction("r5", product: "season.pass", source: .appReceipt),
                ], kind: .appReceipt)
                try await ledger.record(receipt, for: alice)
                let held = try await ledger.entitlements(for: alice, at: Purchases.date(10))
                #expect(held.balance(of: "coins") == 4)
                #expect(held.ownedNonConsumables == ["gems"])
                #expect(held.subscriptions.map(\.subscriptionGroup) == ["mystery.monthly", "pro"])
                #expect(held.subscriptions.allSatisfy { $0.state == .active })
                #expect(held.nonRenewingSubscriptions.map(\.productId) == ["season.pass"])
                #expect(held.isEntitled(to: "pro.yearly"))
            }
        }

        @Test("the type Apple states in a signed transaction replaces the catalog's fallback", arguments: LedgerBackend.all)
        func appleTypeWins(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let receipt = Purchases.proof([Purchases.transaction("c1", product: "coins", quantity: 2, source: .appReceipt)], kind: .appReceipt)
                try await ledger.record(receipt, for: alice)
                #expect(try await ledger.entitlements(for: alice, at: Purchases.date(1)).ownedNonConsumables == ["coins"])
                let jws = Purchases.proof(Purchases.transaction("c1", product: "coins", type: .consumable, quantity: 2))
                #expect(try await ledger.record(jws, for: alice).updatedTransactionIds == ["c1"])
                let held = try await ledger.entitlements(for: alice, at: Purchases.date(1))
                #expect(held.ownedNonConsumables.isEmpty)
                #expect(held.balance(of: "coins") == 2)
                // An older receipt recorded again does not undo it.
                #expect(try await ledger.record(receipt, for: alice).isDuplicate)
                #expect(try await ledger.balance(of: "coins", for: alice).available == 2)
                #expect(try await ledger.checkIntegrity().isHealthy)
            }
        }

        @Test("a refund in a later proof revokes a non-consumable, and an older proof does not reinstate it", arguments: LedgerBackend.all)
        func refundRevokesNonConsumable(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                let original = Purchases.proof(Purchases.nonConsumable("t1"))
                try await ledger.record(original, for: alice)
                let refunded = Purchases.proof(Purchases.nonConsumable("t1", revoked: Purchases.date(3), signed: Purchases.date(3)))
                #expect(try await ledger.record(refunded, for: alice).updatedTransactionIds == ["t1"])
                #expect(try await ledger.record(original, for: alice).isDuplicate)
                let held = try await ledger.entitlements(for: alice, at: Purchases.date(4))
                #expect(held.ownedNonConsumables.isEmpty)
                #expect(held.nonConsumables.first?.transactions.first?.revocationDate == Purchases.date(3))
                #expect(!held.isEntitled(to: "pro.lifetime"))
            }
        }

        @Test("account ids are validated", arguments: ["", String(repeating: "a", count: 257), "a\nb", "tab\there"])
        func invalidAccounts(raw: String) async {
            await expectLedgerError(.invalidAccount) { try AccountID(raw) }
            #expect(AccountID(rawValue: raw) == nil)
        }
    }
}

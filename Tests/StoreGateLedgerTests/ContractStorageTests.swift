import Crypto
import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Storage: encryption at rest and key rotation, reopening, migrations, closing.
    @Suite("Ledger contract: storage")
    struct Storage {
        let alice = Purchases.account("alice")

        static func key(_ byte: UInt8) -> SymmetricKey { SymmetricKey(data: [UInt8](repeating: byte, count: 32)) }

        static func encryption(current: String, _ keys: [String: UInt8]) throws -> ProofEncryption {
            try ProofEncryption(currentKeyID: current, keys: keys.mapValues(key))
        }

        @Test("raw proofs are stored encrypted and come back byte for byte", arguments: LedgerBackend.all)
        func encryptedProofs(backend: LedgerBackend) async throws {
            let configuration = LedgerConfiguration(encryption: try Self.encryption(current: "k1", ["k1": 1]))
            try await backend.withLedger(configuration) { ledger async throws in
                #expect(ledger.isEncryptionConfigured)
                #expect(ledger.startupWarnings.isEmpty)
                let raw = Array("a receipt that must not be stored in clear".utf8)
                try await ledger.record(Purchases.proof([Purchases.nonConsumable("t1")], raw: raw), for: alice)
                let digest = try #require(try await ledger.transaction("t1", in: .production)?.proofDigest)
                #expect(digest == ProofDigest(of: raw))
                #expect(try await ledger.storedProof(digest) == raw)
                #expect(try await ledger.storedProof(ProofDigest(of: [0])) == nil)
            }
        }

        @Test("without a key no raw proof is stored and the ledger says so", arguments: LedgerBackend.all)
        func withoutKey(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                #expect(!ledger.isEncryptionConfigured)
                #expect(ledger.startupWarnings.count == 1)
                let raw = Array("a receipt".utf8)
                try await ledger.record(Purchases.proof([Purchases.nonConsumable("t1")], raw: raw), for: alice)
                #expect(try await ledger.transaction("t1", in: .production)?.proofDigest == ProofDigest(of: raw))
                #expect(try await ledger.storedProof(ProofDigest(of: raw)) == nil)
            }
        }

        @Test("the SQLite file never holds a raw proof in clear")
        func sqliteFileHasNoClearProof() async throws {
            try await LedgerBackend.sqlite.withStore { store async throws in
                let marker = "CLEAR-TEXT-MARKER-\(UUID().uuidString)"
                for configuration in [LedgerConfiguration(), LedgerConfiguration(encryption: try Self.encryption(current: "k1", ["k1": 7]))] {
                    let ledger = try await store.open(configuration)
                    try await ledger.record(Purchases.proof([Purchases.nonConsumable("t\(configuration.isEncryptionConfigured)")], raw: Array(marker.utf8)), for: alice)
                    await ledger.close()
                }
                var bytes: [UInt8] = []
                for suffix in ["", "-wal"] {
                    if let data = FileManager.default.contents(atPath: store.location + suffix) { bytes += data }
                }
                #expect(!bytes.isEmpty)
                let needle = Array(marker.utf8)
                let found = bytes.count >= needle.count && (0...(bytes.count - needle.count)).contains { bytes[$0..<($0 + needle.count)].elementsEqual(needle) }
                #expect(!found)
            }
        }

        @Test("keys rotate: old proofs open with their key, new ones are sealed with the current key", arguments: LedgerBackend.persistent)
        func keyRotation(backend: LedgerBackend) async throws {
            try await backend.withStore { store async throws in
                let old = Array("sealed with k1".utf8)
                let new = Array("sealed with k2".utf8)
                let first = try await store.open(LedgerConfiguration(encryption: try Self.encryption(current: "k1", ["k1": 1])))
                try await first.record(Purchases.proof([Purchases.nonConsumable("t1")], raw: old), for: alice)
                await first.close()

                let rotated = try await store.open(LedgerConfiguration(encryption: try Self.encryption(current: "k2", ["k1": 1, "k2": 2])))
                #expect(try await rotated.storedProof(ProofDigest(of: old)) == old)
                try await rotated.record(Purchases.proof([Purchases.nonConsumable("t2", product: "other")], raw: new), for: alice)
                await rotated.close()

                let onlyNew = try await store.open(LedgerConfiguration(encryption: try Self.encryption(current: "k2", ["k2": 2])))
                #expect(try await onlyNew.storedProof(ProofDigest(of: new)) == new)
                await expectLedgerError(.unknownEncryptionKey) { try await onlyNew.storedProof(ProofDigest(of: old)) }

                let wrongKey = try await store.open(LedgerConfiguration(encryption: try Self.encryption(current: "k2", ["k2": 9])))
                await expectLedgerError(.decryptionFailed) { try await wrongKey.storedProof(ProofDigest(of: new)) }

                let noKey = try await store.open(LedgerConfiguration())
                await expectLedgerError(.unknownEncryptionKey) { try await noKey.storedProof(ProofDigest(of: new)) }
            }
        }

        @Test("everything recorded is there after reopening, and reopening migrates nothing twice", arguments: LedgerBackend.persistent)
        func reopen(backend: LedgerBackend) async throws {
            try await backend.withStore { store async throws in
                let first = try await store.open()
                try await first.record(Purchases.proof([Purchases.consumable("c1", quantity: 4), Purchases.nonConsumable("t1")]), for: alice)
                try await first.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0), renewal: Purchases.renewal(original: "s1", signed: Purchases.date(1))), for: alice)
                try await first.apply(Purchases.notification("n1", type: "DID_RENEW", signed: Purchases.date(30), transaction: Purchases.period("s2", original: "s1", start: 30)))
                try await first.consume("coins", quantity: 1, idempotencyKey: "k", for: alice, at: Purchases.date(2))
                let before = try await first.entitlements(for: alice, at: Purchases.date(40))
                await first.close()
                // Two ledgers opening the same store at once both find it migrated.
                async let second = store.open()
                async let third = store.open()
                let (reopened, other) = try await (second, third)
                #expect(try await reopened.entitlements(for: alice, at: Purchases.date(40)) == before)
                #expect(try await other.consume("coins", quantity: 1, idempotencyKey: "k", for: alice, at: Purchases.date(3)).isReplay)
                #expect(try await reopened.checkIntegrity().isHealthy)
            }
        }

        @Test("a closed ledger refuses every call", arguments: LedgerBackend.all)
        func closed(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                await ledger.close()
                await expectLedgerError(.closed) { try await ledger.record(Purchases.proof(Purchases.nonConsumable("t1")), for: alice) }
                await expectLedgerError(.closed) { try await ledger.entitlements(for: alice, at: Purchases.t0) }
                await expectLedgerError(.closed) { try await ledger.consume("coins", quantity: 1, idempotencyKey: "k", for: alice, at: Purchases.t0) }
            }
        }
    }
}

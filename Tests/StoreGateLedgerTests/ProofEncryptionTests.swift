import Crypto
import Foundation
import StoreGateCore
@testable import StoreGateLedger
import Testing

extension LedgerTests {
    @Suite("Proof encryption")
    struct Encryption {
        @Test("a sealed proof opens only with its key and its digest")
        func binding() throws {
            let encryption = try ProofEncryption(currentKeyID: "a", keys: ["a": SymmetricKey(size: .bits256)])
            let raw = Array("proof".utf8)
            let sealed = try encryption.seal(raw, digest: ProofDigest(of: raw))
            #expect(sealed.keyID == "a")
            #expect(!sealed.combined.contains(Array("proof".utf8)))
            #expect(try encryption.open(sealed, digest: ProofDigest(of: raw)) == raw)
            #expect(throws: LedgerError(.decryptionFailed, reason: "")) { try encryption.open(sealed, digest: ProofDigest(of: [1])) }
            var flipped = sealed.combined
            flipped[flipped.count / 2] ^= 0x01
            #expect(throws: LedgerError(.decryptionFailed, reason: "")) {
                try encryption.open(SealedProof(keyID: "a", combined: flipped), digest: ProofDigest(of: raw))
            }
            #expect(throws: LedgerError(.unknownEncryptionKey, reason: "")) {
                try encryption.open(SealedProof(keyID: "b", combined: sealed.combined), digest: ProofDigest(of: raw))
            }
        }

        static let badSpecifications = [
            "", "k1", "k1=notbase64!", "k1=" + Base64.encode([UInt8](repeating: 1, count: 16)),
            "bad id=" + Base64.encode([UInt8](repeating: 1, count: 32)),
            "k1=" + Base64.encode([UInt8](repeating: 1, count: 32)) + ",k1=" + Base64.encode([UInt8](repeating: 2, count: 32)),
        ]

        @Test("malformed key specifications are refused", arguments: badSpecifications)
        func badSpecification(specification: String) {
            #expect(throws: LedgerError(.invalidEncryptionKey, reason: "")) { try ProofEncryption(specification: specification) }
        }

        @Test("a key specification names the current key first")
        func specification() throws {
            let encryption = try ProofEncryption(specification: "new=\(Base64.encode([UInt8](repeating: 2, count: 32))), old=\(Base64.encode([UInt8](repeating: 1, count: 32)))")
            #expect(encryption.currentKeyID == "new")
            #expect(encryption.keyIDs == ["new", "old"])
        }

        @Test("the current key must be configured")
        func currentKeyMissing() {
            #expect(throws: LedgerError(.invalidEncryptionKey, reason: "")) {
                try ProofEncryption(currentKeyID: "x", keys: ["y": SymmetricKey(size: .bits256)])
            }
        }

        @Test("a product catalog reads its JSON form")
        func catalogJSON() throws {
            let catalog = try ProductCatalog(json: Array(#"{"products":{"coins":{"type":"Consumable"},"pro.y":{"type":"Auto-Renewable Subscription","subscriptionGroup":"pro"}}}"#.utf8))
            #expect(catalog.productType(for: "coins", stated: nil, expiresDate: nil) == .consumable)
            #expect(catalog.subscriptionGroup(for: "pro.y", stated: nil) == "pro")
            #expect(catalog.subscriptionGroup(for: "pro.y", stated: "apple") == "apple")
            #expect(catalog.productType(for: "x", stated: nil, expiresDate: Date()) == .autoRenewable)
            #expect(throws: LedgerError(.invalidConfiguration, reason: "")) { try ProductCatalog(json: Array("{".utf8)) }
        }
    }
}

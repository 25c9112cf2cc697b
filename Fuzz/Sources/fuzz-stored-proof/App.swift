import Crypto
import FuzzSupport
@_spi(Fuzzing) import StoreGateLedger

/// What a ledger backend parses when it reads a stored proof back from a SQLite or PostgreSQL
/// row: the digest column, and the sealed proof (key id + AES-GCM nonce ‖ ciphertext ‖ tag)
/// opened with the configured keys. The input is split into those columns:
/// `[key id length][key id][32-byte digest][sealed bytes]`. Round trip: whatever the sealed
/// bytes column holds, sealing it as a proof and opening it again gives it back. The key
/// specification reader (`id=BASE64KEY,…`) gets the whole input as text as well.
@main
enum App {
    static func main() {
        let encryption: ProofEncryption
        do throws(LedgerError) {
            encryption = try ProofEncryption(currentKeyID: "fuzz", keys: [
                "fuzz": SymmetricKey(data: [UInt8](repeating: 0x42, count: 32)),
                "old": SymmetricKey(data: [UInt8](repeating: 0x17, count: 32)),
            ])
        } catch {
            FuzzTarget.fail("the fuzz keys are refused: \(error)")
        }
        FuzzTarget.run { bytes in
            do throws(LedgerError) {
                _ = try ProofEncryption(specification: String(decoding: bytes, as: UTF8.self))
            } catch {}

            guard let first = bytes.first else { return }
            let keyLength = Int(first % 72)
            guard bytes.count >= 1 + keyLength + 32 else { return }
            let keyID = String(decoding: bytes[1..<(1 + keyLength)], as: UTF8.self)
            let digest = Array(bytes[(1 + keyLength)..<(1 + keyLength + 32)])
            let sealed = Array(bytes[(1 + keyLength + 32)...])
            do throws(LedgerError) {
                _ = try StoredProofFuzzing.digest(stored: digest)
                _ = try StoredProofFuzzing.open(keyID: keyID, sealed: sealed, digest: digest, with: encryption)
            } catch {}

            do throws(LedgerError) {
                let stored = try StoredProofFuzzing.seal(sealed, with: encryption)
                let opened = try StoredProofFuzzing.open(
                    keyID: stored.keyID, sealed: stored.combined, digest: ProofDigest(of: sealed).bytes, with: encryption)
                FuzzTarget.require(opened == sealed, "a sealed proof opens to other bytes")
            } catch {
                FuzzTarget.fail("sealing then opening a proof failed: \(error)")
            }
        }
    }
}

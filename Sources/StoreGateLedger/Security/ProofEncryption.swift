public import Crypto
import StoreGateCore

/// Encryption at rest of the raw proofs the ledger stores: AES-256-GCM under named keys.
///
/// Every stored proof names the id of the key that sealed it, so keys rotate: configure the
/// new key as ``currentKeyID`` and keep the old ones in ``keyIDs``; new proofs are sealed
/// with the current key, old ones still open with theirs. The proof's SHA-256 digest is bound
/// to the ciphertext as additional authenticated data, so a sealed proof moved to another row
/// does not open.
///
/// A ledger configured without encryption does not store raw proofs at all (only their
/// digest): ``LedgerConfiguration/startupWarnings`` says so, and the server logs it.
public struct ProofEncryption: Sendable {
    /// The id of the key that seals new proofs.
    public let currentKeyID: String
    private let keys: [String: SymmetricKey]

    /// Configures encryption with named 256-bit keys.
    ///
    /// - Parameters:
    ///   - currentKeyID: The key that seals new proofs; must be among `keys`.
    ///   - keys: Every key that may have sealed a stored proof, by id. Ids are 1...64
    ///     characters from `A-Z a-z 0-9 . _ -`.
    /// - Throws: ``LedgerError/Code/invalidEncryptionKey`` for a key that is not 256 bits, a
    ///   malformed id, or a current id that is not configured.
    public init(currentKeyID: String, keys: [String: SymmetricKey]) throws(LedgerError) {
        for (id, key) in keys {
            guard Self.isValidKeyID(id) else {
                throw LedgerError(.invalidEncryptionKey, reason: "a key id has 1...64 characters from A-Z a-z 0-9 . _ -")
            }
            guard key.bitCount == 256 else {
                throw LedgerError(.invalidEncryptionKey, reason: "key '\(id)' has \(key.bitCount) bits, not 256")
            }
        }
        guard keys[currentKeyID] != nil else {
            throw LedgerError(.invalidEncryptionKey, reason: "the current key id '\(currentKeyID)' is not among the configured keys")
        }
        self.currentKeyID = currentKeyID
        self.keys = keys
    }

    /// Reads keys from their configuration form: `id=BASE64KEY` entries separated by commas;
    /// the first entry is the current key (`STOREGATE_LEDGER_KEYS="2025b=…,2025a=…"`).
    ///
    /// - Throws: ``LedgerError/Code/invalidEncryptionKey`` for a malformed entry or key.
    public init(specification: String) throws(LedgerError) {
        var keys: [String: SymmetricKey] = [:]
        var first: String?
        for entry in specification.split(separator: ",", omittingEmptySubsequences: true) {
            let parts = entry.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2 else {
                throw LedgerError(.invalidEncryptionKey, reason: "a key entry is written id=BASE64KEY")
            }
            let id = String(parts[0]).trimmingWhitespace()
            guard let bytes = Base64.decode(String(parts[1]).trimmingWhitespace(), mode: .standard) else {
                throw LedgerError(.invalidEncryptionKey, reason: "key '\(id)' is not standard base64")
            }
            guard keys[id] == nil else {
                throw LedgerError(.invalidEncryptionKey, reason: "key id '\(id)' appears twice")
            }
            keys[id] = SymmetricKey(data: bytes)
            if first == nil { first = id }
        }
        guard let first else {
            throw LedgerError(.invalidEncryptionKey, reason: "no encryption key in the specification")
        }
        try self.init(currentKeyID: first, keys: keys)
    }

    /// The ids of every configured key, sorted.
    public var keyIDs: [String] { keys.keys.sorted() }

    /// Seals a raw proof with the current key.
    package func seal(_ plaintext: [UInt8], digest: ProofDigest) throws(LedgerError) -> SealedProof {
        try sealWithCurrentKey(plaintext) { keyID in Self.aad(digest, keyID) }
    }

    /// Opens a sealed proof with the key it names.
    ///
    /// - Throws: ``LedgerError/Code/unknownEncryptionKey`` when its key is not configured;
    ///   ``LedgerError/Code/decryptionFailed`` when it does not authenticate.
    package func open(_ sealed: SealedProof, digest: ProofDigest) throws(LedgerError) -> [UInt8] {
        let plaintext = try openSealed(sealed, "proof") { keyID in Self.aad(digest, keyID) }
        guard ProofDigest(of: plaintext) == digest else {
            throw LedgerError(.decryptionFailed, reason: "a stored proof does not match its digest")
        }
        return plaintext
    }

    /// Seals a stored secret (a webhook endpoint's signing secrets) with the current key,
    /// bound to `context` (the record it belongs to), so a sealed value cannot be moved to
    /// another record.
    package func sealSecret(_ plaintext: [UInt8], context: String) throws(LedgerError) -> SealedProof {
        try sealWithCurrentKey(plaintext) { keyID in Self.secretAAD(context, keyID) }
    }

    /// Opens a secret ``sealSecret(_:context:)`` sealed for `context`.
    ///
    /// - Throws: ``LedgerError/Code/unknownEncryptionKey`` or ``LedgerError/Code/decryptionFailed``.
    package func openSecret(_ sealed: SealedProof, context: String) throws(LedgerError) -> [UInt8] {
        try openSealed(sealed, "secret") { keyID in Self.secretAAD(context, keyID) }
    }

    /// AES-GCM under the current key, authenticating what `aad` gives for the key's id.
    private func sealWithCurrentKey(_ plaintext: [UInt8], authenticating aad: (String) -> [UInt8]) throws(LedgerError) -> SealedProof {
        guard let key = keys[currentKeyID] else {
            throw LedgerError(.unknownEncryptionKey, reason: "the current key is not configured")
        }
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(plaintext, using: key, authenticating: aad(currentKeyID))
        } catch {
            throw LedgerError(.decryptionFailed, reason: "AES-GCM sealing failed")
        }
        guard let combined = box.combined else {
            throw LedgerError(.decryptionFailed, reason: "AES-GCM gave no combined representation")
        }
        return SealedProof(keyID: currentKeyID, combined: Array(combined))
    }

    /// Opens `sealed` (a stored `what`) under the key it names, authenticating what `aad`
    /// gives for that key's id.
    private func openSealed(_ sealed: SealedProof, _ what: String, authenticating aad: (String) -> [UInt8]) throws(LedgerError) -> [UInt8] {
        guard let key = keys[sealed.keyID] else {
            throw LedgerError(.unknownEncryptionKey, reason: "a stored \(what) was sealed with key '\(sealed.keyID)', which is not configured")
        }
        do {
            let box = try AES.GCM.SealedBox(combined: sealed.combined)
            return Array(try AES.GCM.open(box, using: key, authenticating: aad(sealed.keyID)))
        } catch {
            throw LedgerError(.decryptionFailed, reason: "a stored \(what) did not authenticate under key '\(sealed.keyID)'")
        }
    }

    private static func secretAAD(_ context: String, _ keyID: String) -> [UInt8] {
        Array("storegate-secret-v1:\(context):\(keyID)".utf8)
    }

    private static func aad(_ digest: ProofDigest, _ keyID: String) -> [UInt8] {
        Array("storegate-proof-v1:".utf8) + digest.bytes + Array(":\(keyID)".utf8)
    }

    private static func isValidKeyID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
                return true
            default:
                return false
            }
        }
    }
}

/// A raw proof sealed by ``ProofEncryption``: the key id and AES-GCM's nonce ‖ ciphertext ‖ tag.
public struct SealedProof: Sendable, Hashable {
    /// The id of the key that sealed it.
    public let keyID: String
    /// Nonce, ciphertext and tag, as AES-GCM's combined representation.
    public let combined: [UInt8]

    package init(keyID: String, combined: [UInt8]) {
        self.keyID = keyID
        self.combined = combined
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let end = scalars.lastIndex(where: { !$0.properties.isWhitespace })
        else { return "" }
        return String(scalars[start...end])
    }
}

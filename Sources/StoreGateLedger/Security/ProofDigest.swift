import Crypto
import StoreGateCore

/// The SHA-256 of a raw proof: how the ledger names a stored proof without storing it in clear.
public struct ProofDigest: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The 32 digest bytes.
    public let bytes: [UInt8]

    /// The digest of `rawProof`.
    public init(of rawProof: [UInt8]) {
        self.bytes = Array(SHA256.hash(data: rawProof))
    }

    /// A digest read back from storage.
    ///
    /// - Throws: ``LedgerError/Code/storage`` when `bytes` is not 32 bytes long.
    package init(stored bytes: [UInt8]) throws(LedgerError) {
        guard bytes.count == 32 else {
            throw LedgerError(.storage, reason: "a stored proof digest has \(bytes.count) bytes, not 32")
        }
        self.bytes = bytes
    }

    /// Lower-case hexadecimal.
    public var description: String { Hex.encode(bytes) }
}

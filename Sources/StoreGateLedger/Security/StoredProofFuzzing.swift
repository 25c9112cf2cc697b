/// Entry points for StoreGate's fuzz targets (`Fuzz/`): the byte-level decoding a ledger backend
/// does when it reads a stored proof back (the SQLite and PostgreSQL rows hold the key id, the
/// sealed bytes and the digest; ``Ledger/storedProof(_:)`` opens them).
///
/// Not API: the `Fuzzing` SPI may change with any release.
@_spi(Fuzzing)
public enum StoredProofFuzzing {
    /// Reads a stored digest column, as the backends' row decoders do.
    ///
    /// - Throws: ``LedgerError/Code/storage`` when it is not 32 bytes.
    public static func digest(stored bytes: [UInt8]) throws(LedgerError) -> ProofDigest {
        try ProofDigest(stored: bytes)
    }

    /// Opens a stored proof from its row's columns (key id, sealed bytes, digest), as every
    /// backend's `storedProof(_:)` does.
    ///
    /// - Throws: ``LedgerError`` as ``ProofEncryption`` opening does.
    public static func open(
        keyID: String,
        sealed combined: [UInt8],
        digest: [UInt8],
        with encryption: ProofEncryption
    ) throws(LedgerError) -> [UInt8] {
        try encryption.open(SealedProof(keyID: keyID, combined: combined), digest: ProofDigest(stored: digest))
    }

    /// Seals `plaintext` as a backend stores it, for round-trip checks.
    public static func seal(_ plaintext: [UInt8], with encryption: ProofEncryption) throws(LedgerError) -> SealedProof {
        try encryption.seal(plaintext, digest: ProofDigest(of: plaintext))
    }
}

public import StoreGateCore

/// Entry points for StoreGate's fuzz targets (`Fuzz/`), which reach steps of receipt decoding
/// that the public API runs only together.
///
/// Not API: the `Fuzzing` SPI may change with any release.
@_spi(Fuzzing)
public enum ReceiptFuzzing {
    /// What the PKCS#7 container step found.
    public struct Container: Sendable {
        /// The encapsulated content: the receipt payload, the bytes the signature covers.
        public let content: [UInt8]
        /// How many certificates the SignedData embeds.
        public let certificateCount: Int
        /// How many SignerInfos it carries.
        public let signerCount: Int
    }

    /// Runs the structure step alone: the BER/PKCS#7 ContentInfo → SignedData → id-data
    /// content, as ``ReceiptVerifier`` and ``UnverifiedReceipt`` read it.
    ///
    /// - Throws: ``ReceiptError`` at the input or structure step.
    public static func container(der: [UInt8], limits: Limits = .default) throws(ReceiptError) -> Container {
        let container = try ReceiptContainer(der: der, limits: limits)
        return Container(
            content: container.content,
            certificateCount: container.signedData.certificates.count,
            signerCount: container.signedData.signerInfos.count
        )
    }

    /// Runs the signer step alone: parses every embedded certificate and finds the one the
    /// first SignerInfo names, as ``ReceiptVerifier`` does before checking the signature.
    ///
    /// - Returns: The index of the signer among the embedded certificates.
    /// - Throws: ``ReceiptError`` at the structure or signer step.
    public static func signerIndex(der: [UInt8], limits: Limits = .default) throws(ReceiptError) -> Int {
        let container = try ReceiptContainer(der: der, limits: limits)
        guard let signerInfo = container.signedData.signerInfos.first else {
            throw ReceiptError(.noSigner, field: "SignedData.signerInfos", reason: "the receipt has no signer")
        }
        return try ReceiptVerifier.findSigner(signerInfo.identifier, in: container.signedData.certificates).chain.leafIndex
    }
}

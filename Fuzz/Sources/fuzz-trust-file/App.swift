import FuzzSupport
import StoreGateCore

/// Trust-directory certificate loading (`TrustStore.addCertificateFile`, what
/// `TrustStore.load(directory:)` does per file): PEM or DER, pinned Apple roots and opt-in
/// anchors. Each input is loaded as a `.der` and as a `.pem` file; a certificate that loads is
/// then handed to a chain verifier. Seeds: the test CA roots and the real Apple certificates
/// in ../shared/fixtures/certs.
@main
enum App {
    static func main() {
        FuzzTarget.run { bytes in
            for name in ["anchor.der", "anchor.pem"] {
                var store = TrustStore()
                do throws(ChainError) {
                    try store.addCertificateFile(named: name, contents: bytes)
                } catch {
                    continue
                }
                FuzzTarget.require(store.anchorFingerprints.count == 1, "one file gave \(store.anchorFingerprints.count) anchors")
                _ = CertificateChainVerifier(trustStore: store)
            }
        }
    }
}

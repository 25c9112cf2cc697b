@_spi(Fuzzing) import StoreGateReceipt
import FuzzSupport

/// The BER/PKCS#7 container reader: ContentInfo → SignedData (BER-tolerant: indefinite
/// lengths, constructed OCTET STRINGs, unsorted certificate SET) → SignerInfo → id-data
/// content; then the signer step (every embedded certificate parsed, the one the SignerInfo
/// names found). Seeds: minted receipts with each of Apple's encoding quirks, plus the real
/// receipts in ../shared/fixtures/receipts.
@main
enum App {
    static func main() {
        FuzzTarget.run { bytes in
            do throws(ReceiptError) {
                let container = try ReceiptFuzzing.container(der: bytes)
                FuzzTarget.require(container.content.count < bytes.count, "the content is larger than its container")
            } catch {
                return
            }
            do throws(ReceiptError) {
                _ = try ReceiptFuzzing.signerIndex(der: bytes)
            } catch {
                return
            }
        }
    }
}

import Foundation
import FuzzSupport
import StoreGateReceipt

/// The receipt payload decoder: the SET of `ReceiptAttribute`s and the in-app purchase SETs
/// inside it (in-place TLV reader, chunked values, RFC 3339 dates, duplicate fields), then the
/// verifyReceipt-shaped JSON view of the result (Apple's date spellings for any date the
/// payload can hold) and its Codable round trip. Seeds: the payloads of minted receipts.
@main
enum App {
    static func main() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        FuzzTarget.run { bytes in
            let receipt: AppReceipt
            do throws(ReceiptError) {
                receipt = try AppReceipt(payload: bytes)
            } catch {
                return
            }
            let json = receipt.appleJSON(requestDate: receipt.creationDate)
            let encoded: Data
            do {
                encoded = try encoder.encode(json)
            } catch {
                FuzzTarget.fail("a decoded receipt's verifyReceipt JSON does not encode: \(error)")
            }
            do {
                let again = try JSONDecoder().decode(AppleReceiptJSON.self, from: encoded)
                FuzzTarget.require(again == json, "a receipt's verifyReceipt JSON does not read back the same")
            } catch {
                FuzzTarget.fail("a receipt's verifyReceipt JSON does not decode: \(error)")
            }
        }
    }
}

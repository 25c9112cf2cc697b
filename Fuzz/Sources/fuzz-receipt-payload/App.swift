import Foundation
import FuzzSupport
import StoreGateReceipt

/// The receipt payload decoder: the SET of `ReceiptAttribute`s and the in-app purchase SETs
/// inside it (in-place TLV reader, chunked values, RFC 3339 dates, duplicate fields), then the
/// verifyReceipt-shaped view of the result (`VerifyReceiptReceipt`: Apple's date spellings for
/// any date the payload can hold) and its Codable round trip: the JSON it encodes decodes, and
/// the decoded receipt encodes the same JSON again. (Not the same value: a date with a
/// fraction of a millisecond is written as the nearest whole one.) Seeds: the payloads of
/// minted receipts.
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
            let json = VerifyReceiptReceipt(receipt, requestDate: receipt.creationDate)
            let encoded: Data
            do {
                encoded = try encoder.encode(json)
            } catch {
                FuzzTarget.fail("a decoded receipt's verifyReceipt JSON does not encode: \(error)")
            }
            let again: VerifyReceiptReceipt
            do {
                again = try JSONDecoder().decode(VerifyReceiptReceipt.self, from: encoded)
            } catch {
                FuzzTarget.fail("a receipt's verifyReceipt JSON does not decode: \(error)")
            }
            do {
                FuzzTarget.require(try encoder.encode(again) == encoded, "a receipt's verifyReceipt JSON does not read back the same")
            } catch {
                FuzzTarget.fail("a receipt read back from its verifyReceipt JSON does not encode: \(error)")
            }
        }
    }
}

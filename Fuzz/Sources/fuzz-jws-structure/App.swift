import Foundation
import FuzzSupport
import StoreGateCore
import StoreGateSignedData

/// The compact-JWS splitter, the protected header reader and the payload JSON reader with
/// Apple's four payload models (signed transaction, renewal info, app transaction,
/// notification), no signature or chain involved.
///
/// Round trips the code claims:
/// - base64url is strict (no padding, zero trailing bits), so each part that decodes has
///   exactly one encoding: re-encoding it gives the part back byte for byte;
/// - a decoded model writes "Apple's JSON" (same members, dates as milliseconds): reading that
///   JSON back with the same model and writing it again gives the same bytes.
@main
enum App {
    static func main() {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        FuzzTarget.run { bytes in
            let jws: CompactJWS
            do throws(SignedDataError) {
                jws = try CompactJWS(bytes: bytes)
            } catch {
                return
            }
            let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
            FuzzTarget.require(parts.count == 3, "a JWS that split has \(parts.count) parts")
            FuzzTarget.require(Array(Base64.encode(jws.payload, url: true).utf8) == Array(parts[1]), "the payload part has a second encoding")
            FuzzTarget.require(Array(Base64.encode(jws.signature, url: true).utf8) == Array(parts[2]), "the signature part has a second encoding")
            FuzzTarget.require(jws.signingInput.elementsEqual(parts[0] + [UInt8(ascii: ".")] + parts[1]), "the signing input is not header.payload")

            roundTrip(encoder, jws.payload) { json throws(SignedDataError) in try JWSTransactionDecodedPayload(json: json) }
            roundTrip(encoder, jws.payload) { json throws(SignedDataError) in try JWSRenewalInfoDecodedPayload(json: json) }
            roundTrip(encoder, jws.payload) { json throws(SignedDataError) in try AppTransaction(json: json) }
            roundTrip(encoder, jws.payload) { json throws(SignedDataError) in try ResponseBodyV2DecodedPayload(json: json) }
            do throws(SignedDataError) {
                _ = try UnverifiedSignedData(bytes: bytes)
            } catch {
                return
            }
        }
    }

    /// Decodes `json` with a model; when it decodes, its written JSON must read back and write
    /// the same bytes again.
    static func roundTrip<Model: Encodable>(
        _ encoder: JSONEncoder,
        _ json: [UInt8],
        _ decode: ([UInt8]) throws(SignedDataError) -> Model
    ) {
        let model: Model
        do throws(SignedDataError) {
            model = try decode(json)
        } catch {
            return
        }
        let written: [UInt8]
        do {
            written = Array(try encoder.encode(model))
        } catch {
            FuzzTarget.fail("a decoded \(Model.self) does not encode: \(error)")
        }
        let again: Model
        do throws(SignedDataError) {
            again = try decode(written)
        } catch {
            FuzzTarget.fail("the JSON a \(Model.self) writes does not read back: \(error)")
        }
        do {
            let rewritten = Array(try encoder.encode(again))
            FuzzTarget.require(
                rewritten == written,
                "a \(Model.self) read back from its own JSON writes different JSON: \(FuzzTarget.difference(written, rewritten))")
        } catch {
            FuzzTarget.fail("a \(Model.self) read back from its own JSON does not encode: \(error)")
        }
    }
}

import Foundation
import StoreGateCore
import StoreGateSignedData
import Testing

/// Inputs the fuzz targets (`Fuzz/`, `Scripts/fuzz.sh`) found, each fed as found to the entry
/// point that failed, expecting the typed error the fix gives.
@Suite("Fuzz regressions: signed data")
struct SignedDataFuzzRegressionTests {
    /// fuzz-jws-structure, crash-1f2ca104ec3578694a2bc2f15e0f43aa25f9e120: an app transaction
    /// whose `requestDate` is 16976801222556447 ms (year 540,000) was read, but the JSON the
    /// model writes for it read back as another date; integer timestamps had no range at all
    /// (Int64.max ms overflowed the ledger's milliseconds).
    static let hugeRequestDate = "ZXlKNE5XTWlPbHNpVFVsSlFucEVRRTFUU1hkSlFWbEVWbEZSUnpsd2RFRnBSVUY0VjJsNU5DdFVNWHAwTXpkV2MzVXdkbUkyV1hWdE1DdE9USFJFY1Voc1N6WnljRTFqZGpaS1ptNUJQU0pkTENKaGJHY2lPaUpGVXpJMU5pSXNJblI1Y0NJNklrcFhWQ0lzSW10cFpDSTZJa0Z3Y0d4bFgxaGpiMlJsWDB0bGVTSjkuZXlKaWRXNWtiR1ZKWkNJNkltTnZiUzVsZUdGdGNHeGxMbTVoZEhWeVpXeGhZaTVpWVZsQ1FXWTRRMEZSUVhkS1FWbEVWbEl3VWtKQ01IZEhORVZhVlROU2RtTnRWa3hoV0ZGblZrZFdlbVJIYkhWYWVVSndZbWxDV1ZreU9XdGFWRUZQUW1kT1ZraFJPRUpCWmpoRlFrRk5RMEkwUVhkRFoxbEpTMjlhU1hwcU1FVkJkMDl5U21rMWRWd3ZhakpJT0RsWFYwdG5VemhPTUdoTmMwMXNaaUlzSW5KbGNYVmxjM1JFWVhSbElqb3hOamszTmpnd01USXlNalUxTmpRME55d2liM0pwWjJsdVlXeEJjSEJzYVdOeGRHbHZibFpsY25OcGIyNGlPaUl4SWl3aWIzSnBaMmx1WVd4UWRYSmphR0Z6VlVSaGRHVWlPaTAyTWpFek5UYzJPVFl3TURBd01IMC5EcGRrX1ZzTzJNVUNHUkNDSW1uYjRRR0JLSGZRQzJpNHNQQ2c="

    @Test("a payload timestamp past ±8.64e15 ms is refused when read")
    func hugeTimestampRefused() throws {
        let bytes = try #require(Data(base64Encoded: Self.hugeRequestDate))
        let jws = try CompactJWS(bytes: Array(bytes))
        #expect(throws: SignedDataError(.invalidField, reason: "")) {
            try AppTransaction(json: jws.payload)
        }
    }

    @Test("timestamps at the edges of the range read and write back the same",
          arguments: ["8640000000000000", "-8640000000000000", "-62135769600000", "1697680122255.6443", "0"])
    func edges(_ value: String) throws {
        let transaction = try JWSTransactionDecodedPayload(json: Array(#"{"purchaseDate":\#(value)}"#.utf8))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let written = try encoder.encode(transaction)
        let again = try JWSTransactionDecodedPayload(json: Array(written))
        #expect(try encoder.encode(again) == written)
        let first = try #require(transaction.purchaseDate).timeIntervalSince1970
        let second = try #require(again.purchaseDate).timeIntervalSince1970
        #expect(abs(first - second) <= 1e-6 * max(1, abs(first) / 1e9))
    }

    @Test("a timestamp past the range is refused in either spelling",
          arguments: ["8640000000000001", "-8640000000000001", "9223372036854775807", "1e17", "1.6976801222556447e16"])
    func pastRange(_ value: String) {
        #expect(throws: SignedDataError(.invalidField, reason: "")) {
            try JWSTransactionDecodedPayload(json: Array(#"{"purchaseDate":\#(value)}"#.utf8))
        }
    }
}

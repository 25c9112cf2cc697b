import Foundation
import PropertyBased
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

    /// fuzz-jws-structure (CI, 2026-11-24), crash-1719d5d9f7a49e97e99357b3e5414be92f9fcea1: a
    /// transaction whose `purchaseDate` is 1697697679936050.2 ms (a fraction in year 55,000)
    /// read, but its microseconds do not fit a Double's 53 bits, so the JSON written for it read
    /// back as another date.
    static let fractionalFarDate = "ZXlKcmFXUWlPaUpCY0hCc1pWOVlZMjlrWlY5TFpYa2lMQ0owZVhBaU9pSktWMVFpTENKaGJHY2lPaUpGVXpJMU5pSXNJbmcxWXlJNld5Sk5TVWxDZWtSRE0zSndTVXBIUWtWWEsyZG5jSEIwUVdsRlFYaFhhWGswSzFReGVuUXpOMVp6ZFRCMllqWlpkVzB3SzA1TWRFUnhTR3hMTm5Kd1RXTjJOa3BtYmtFOUlsMTkuZXlKcGJrRndjRTkzYm1WeWMyaHBjRlI1Y0dVaU9pSlFWVkpEU0VGVFJVUWlMQ0p3ZFhKamFHRnpaVVJoZEdVaU9qRTJPVGMyT1RjMk56azVNell3TkRrdU56STVOeXdpYVhOVmNHZHlZV1JsWkNJNlptRnNjMlVzSW1SbGRtbGpaVlpsY21sbWFXTmhkR2x2YmlJNkluTkhSRzV3Wnl0dmVtSTRkWGRFVTNWRFJGb3liMVphYnpGRFMzSmlRamgxYWxJNFZuaERlR2g1YTFKM2VVSkpTelo0TmxoRGVVVlNiVGg1VjNKNlJUZ2lMQ0p2Wm1abGNsUjVjR1VpT2pFc0luRjFZVzUwYVhSNUlqb3hMQ0owY21GdWMyRmpkR2x2Ymtsa0lqb2lNQ0lzSW5SNWNHVWlPaUpCZFhSdkxWSmxibVYzWVdKc1pTQlRkV0p6WTNKcGNIUnBiMjRpTENKMGNtRnVjMkZqZEcwdmJsSmxZWE52YmlJNklsQlZVa05JUVZORklpd2ljSEp2WkhWamRFbGtJam9pY0dGemN5NXdjbVZ0YVhWdElpd2laWGh3YVhKbGMwUmhkR1VpT2pFM01EQXpOVGd6TXpZd05Ea3VOekk1Tnl3aVpXNTJhWEp2Ym0xbGJuUWlPaUpZWTI5a1pTSXNJbk4wYjNKbFpuSnZiblJKWkNJNklqRTBNelEwTVNJc0ltOXlhV2RwYm1Gc1ZISmhibk5oWTNScGIyNUpaQ0k2SWpBaUxDSmlkVzVrYkdWSlpDSTZJbU52YlM1bGVHRnRjR3hsTG01aGRIVnlaV3hoWWk1aVlXTnJlV0Z5WkdKcGNtUnpMbVY0WVcxd2JHVWlMQ0prWlhacFkyVldaWEpwWm1sallYUnBiMjVPYjI1alpTSTZJamRsWkdWaE9EZGtMVGs0WmpBdE5ESmtNQzA1TmpneUxUUTVZMkU0TVRBeU1tWTNNeUlzSW5kbFlrOXlaR1Z5VEdsdVpVbDBaVzFKWkNJNklqQWlMQ0p6ZEc5eVpXWnliMjUwSWpvaVZWTkJJbjAucmtKWW52dWpTdHRlUmtNSGhvSVIyVGhtTkZuYXBwbGljYXRpb25WZXJzaW9ueUtjeDVYeElha1hZZGgtMW9LdEVWRVU1elFBaU9OYUxEcEJETzVKaExMclRiZnA3TFM1dE1pcW1nSHc="

    @Test("a fractional timestamp beyond 2^53 microseconds is refused when read")
    func fractionalFarDateRefused() throws {
        let bytes = try #require(Data(base64Encoded: Self.fractionalFarDate))
        let jws = try CompactJWS(bytes: Array(bytes))
        #expect(throws: SignedDataError(.invalidField, reason: "")) {
            try JWSTransactionDecodedPayload(json: jws.payload)
        }
        for value in ["1697697679936050.2", "9007199254741.5", "-62135769600000.5"] {
            #expect(throws: SignedDataError(.invalidField, reason: "")) {
                try JWSTransactionDecodedPayload(json: Array(#"{"purchaseDate":\#(value)}"#.utf8))
            }
        }
    }

    @Test("timestamps at the edges of the range read and write back the same",
          arguments: ["8640000000000000", "-8640000000000000", "-62135769600000", "1697680122255.6443", "9007199254740.5", "0"])
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

    /// fuzz-jws-structure (CI, 2026-11-25), crash-1ff37f8e954026ab5c51675b1eb3cfc392c6f480: a
    /// transaction whose `expiresDate` is 5700358336049.7297 ms (a fraction in year 2150) read,
    /// and its JSON written, read and written again changed the last digit: a `Date` (a Double
    /// of seconds since 2001) there holds no single microsecond, so the microsecond written read
    /// back as a neighbouring date. The writer now gives milliseconds that read back exactly.
    static let fractionalFutureDate = "ZXlKcmFXUWlPaUpCY0hCc1pWOVlZMjlrWlY5TFpYa2lMQ0owZVhBaU9pSktWMVFpTENKaGJHY2lPaUpGVXpJMU5pSXNJbmcxWXlJNld5Sk5TVWxDZWtSRFEwRllSMmRCZDBsQ1FXZEpRa0ZVUVV0Q1oyZHhhR3RxVDFCUlVVUkJha0pKVFZOSmQwbEJXVVJXVVZGRVJYaHNWR1JIT1hsYVZYUndaRU5DVlZwWVRqQmhWelZ1U1Vkc2RVbEdhR3BpTWxKc1RWTkpkMGxCV1VSV1VWRkxSWGhzVkdSSE9YbGFWRU5DVlZwWVRqQmhWelZ1U1Vkc2RVbEdhR3BpTWxKc1RVSTBXRVJVU1hwTlZFRjRUMVJCZUU1RVZYcE9iRzlZUkZSSk1FMVVRWGhQUkVSeFNHeExObkp3VFdOMk5rcG1ia0U5SWwxOS5leUpwYmtGd2NFODZibVZ5YzJocGNGUjVjR1VpT2lKUVZWSkRTRUZUUlVRaUxDSndkWEpqYUdGelpVUmhkR1VpT2pFMk9UYzJOems1TXpZd05Ea3VOekk1Tnl3aWMzVmljMk55YVhCMGFXOXVSM0p2ZFhCSlpHVnVkR2xtYVdWeUlqb2lOa1l6UVRrelFVSWlMQ0p6YVdkdVpXUkVZWFJsSWpveE5qazNOamM1T1RNMk1EVTJMalE0TlN3aWIzSnBaMmx1WVd4UWRYSmphR0Z6WlVSaGRHVWlPakUyT1RjMk56azVNell3TkRrdU56STVOeXdpYVhOVmNHZHlZV1JsWkNJNlptRnNjMlVzSW1SbGRtbGpaVlpsY21sbWFXTmhkR2x2YmlJNkluTkhSRzV3Wnl0dmVtSTRkWGRFVTNWRFJGb3liMVphYnpGRFMzSmlRamgxYWxJNFZuaERlR2g1YTFKM2VVSkpTelo0TmxoRGVVVlNiVGg1VjNKNlJUZ2lMQ0p2Wm1abGNsUjVjR1VpT2pFc0luRjFZVzUwYVhSNUlqb3hMQ0owY21GdWMyRmpkR2x2Ymtsa0lqb2lNQ0lzSW5SNWNHVWlPaUpCZFhSdkxWSmxibVYzWVdKc1pTQlRkV0p6WTNKcGNIUnBiMjRpTENKMGNtRjBjMkZqZEdsdmJsSmxZWE52YmlJNklsQlZVa05JUVZORklpd2ljSEp2WkhWamRFbGtJam9pY0dGemN5NXdjbVZ0YVhWdElpd2laWGh3YVhKbGMwUmhkR1VpT2pVM01EQXpOVGd6TXpZd05Ea3VOekk1Tnl3aVpXNTJhWEp2Ym0xbGJuUWlPaUpZWTI5a1pTSXNJbk4wYjNKbFpuSnZiblJKWkNJNklqRTBNelEwTVNJc0ltOXlhV2RwYm1Gc1ZISmhibk5oWTNScGIyNUpaQ0k2SWpBaUxDSmlkVzRrYkdWSlpDSTZJbU52YlM1bGVHRnRjR3hsTG01aGRIVnlaV3hoWWk1aVlXTnJlV0Z5WkdKcGNtUnpMbVY0WVcxd2JHVWlMQ0prWlhacFkyVldaWEpwWm1sallYUnBiMjVPYjI1alpTSTZJamRsWkdWaE9EZGtMVGs0WmpBdE5ESmtNQzA1TmpneUxUUTVZMkU0TVRBeU1tWTNNeUlzSW5kbFlrOXlaR1Z5VEdsdVpVbDBaVzFKWkNJNklqQWlMQ0p6ZEc5eVpXWnliMjUwSWpvaVZWTkJJbjAucmtKWW52dWpTdHRlUmtNSGhvSVIyVGhtTkZueUtjeDVYeElha1hZZGgtMW9LdEVWRVU1elFBaU9OYUxEcEJETzVKaExMclRiZnA3TFM1dE1pcW1nSHc="

    @Test("a fractional timestamp of year 2150 is written back the same")
    func fractionalFutureDate() throws {
        let bytes = try #require(Data(base64Encoded: Self.fractionalFutureDate))
        let jws = try CompactJWS(bytes: Array(bytes))
        let transaction = try JWSTransactionDecodedPayload(json: jws.payload)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let written = try encoder.encode(transaction)
        let again = try JWSTransactionDecodedPayload(json: Array(written))
        #expect(again.expiresDate == transaction.expiresDate)
        #expect(try encoder.encode(again) == written)
    }

    @Test("any timestamp the reader takes, whole or fractional, is written as milliseconds that read back as the same date")
    func millisecondsReadBack() async throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        // Whole milliseconds across the whole range; fractions (four digits) up to 2^53 µs.
        let whole = Gen.int(in: -8_640_000_000_000_000...8_640_000_000_000_000)
        let integral = Gen.int(in: -9_007_199_254_739...9_007_199_254_739)
        let digits = Gen.int(in: 0...9999)
        await propertyCheck(count: 1500, input: whole, integral, digits) { milliseconds, integral, digits in
            let fraction = String(digits)
            let signed = "\(integral).\(String(repeating: "0", count: 4 - fraction.count))\(fraction)"
            for value in [String(milliseconds), signed] {
                let json = Array(#"{"purchaseDate":\#(value)}"#.utf8)
                guard let read = try? JWSTransactionDecodedPayload(json: json) else {
                    Issue.record("\(value) ms refused")
                    continue
                }
                let written = try encoder.encode(read)
                let again = try JWSTransactionDecodedPayload(json: Array(written))
                #expect(again.purchaseDate == read.purchaseDate, "\(value) ms read back as another date")
                #expect(try encoder.encode(again) == written, "\(value) ms written back otherwise")
            }
        }
        // Whole and microsecond values of today's dates are written as they were read.
        #expect(AppleDate.milliseconds(AppleDate.date(milliseconds: 1_697_679_936_049.7297)) == 1_697_679_936_049.7297)
        #expect(AppleDate.milliseconds(AppleDate.date(milliseconds: 1_697_679_936_049)) == 1_697_679_936_049)
    }

    @Test("a timestamp past the range is refused in either spelling",
          arguments: ["8640000000000001", "-8640000000000001", "9223372036854775807", "1e17", "1.6976801222556447e16"])
    func pastRange(_ value: String) {
        #expect(throws: SignedDataError(.invalidField, reason: "")) {
            try JWSTransactionDecodedPayload(json: Array(#"{"purchaseDate":\#(value)}"#.utf8))
        }
    }
}

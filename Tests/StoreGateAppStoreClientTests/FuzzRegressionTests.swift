import Foundation
import PropertyBased
import StoreGateAppStoreClient
import Testing

/// Inputs the fuzz targets (`Fuzz/`, `Scripts/fuzz.sh`) found, each fed as found to the entry
/// point that failed, expecting the typed error the fix gives.
@Suite("Fuzz regressions: App Store client")
struct AppStoreClientFuzzRegressionTests {
    /// fuzz-verifyreceipt-reply, crash-667bd5105c961aefb33f90c9e265901246082940: an
    /// `expires_date_ms` of 1.7e23 was read as a date that writing the reply back in Apple's
    /// spelling could not hold in an Int64 of milliseconds (a trap in `jsonBytes()`).
    static let hugeMilliseconds = "eyJlbnZpcm9ubWVudCI6IlNhbmRib3giLCJsYXRlc3RfcmVjZWlwdCI6Ik1JSVQiLCJsYXRlc3RfcmVjZWlwdF9pbmZvIjpbeyJleHBpcmVzX2RhdGUiOiIyMDIzLTEyLTE0IDIyOjEzOjIwIEV0Yy9HTVQiLCJleHBpcmVzX2RhdGVfbXMiOiIxNzAyNTkyMDAwMDAwMDAwMDAwMDAwMjEiLCJ3ZWJfb3JkZXJfbGluZV9pdGVtX2lkIjoiMzAwMDAwMDAxMSJ9XSwicGVuZGluZ19yZW5ld2FsX2luZm8iOlt7ImF1dG9fcmVuZXdfcHJvZHVjdF9pZCI6ImNvbS5leGFtcGxlLm1vbnRobHkiLCJhdXRvX3JlbmV3X3N0YXR1cyI6IjEiLCJncmFjZV9wZXJpb2RfZXhwaXJlc19kYXRlX21zIjoiMTcwMjYwMDAwMDAwMCIsImlzX2luX2JpbGxpbmdfcmV0cnlfcGVyaW9kIjoiMCIsIm9yaWdpbmFsX3RyYW5zYWN0aW9uX2lkIjoiMjAwMDAwMDAwMCIsImluX2FwcF9vd25lcnNoaXBfdHlwZSI6IlBVUkNIQVNFRCIsImlzX2luX2ludHJvX29mZmVyX3BlcmlvZCI6ImZhbHNlIiwiaXNfdHJpYWxfcGVyaW9kIjoiZmFsc2UiLCJvcmlnaW5hbF90cmFuc2FjdGlvbl9pZCI6IjIwMDAwMDAwMDAwMDAwMTAiLCJwcm9kdWN0X2lkIjoiY29tLmV4YW1wbGUubW9udGhseSIsInB1cmNoYXNlX3VjdGRhdGUiOiIyMDIzLTExLTE0IDIyOjEzOjIwIEV0Yy9HTVQiLCJwdXJjaGFzZV9kYXRlX21zIjoiMTcwMDAwMDAwMDAwMCIsInB1cmNoYXNlX2RhdGVfcHN0IjoiMjAyMy0xMS0xNCAxNDoxMzoyMCBBbWVyaWNhL0xvc19BbmdlbGVzIiwicXVhbnRpdHkiOiIxIiwic3Vic2NyaXB0aW9uX2dyb3VwX2lkZW50aWZpZXIiOiIyMTAwMDAwMCIsInRyYW5zYWN0aW9uX2lkIjoiMjAwMDAwMDAwMDAwMDAyMSIsIndlYl9vcmRlcl9saW5lX2l0ZW1faWQiOiIzMDAwMDAwMDExIn1dLCJwZW5kaW5nX3JlbmV3YWxfaW5mbyI6W3siYXV0b19yZW5ld19wcm9kdWN0X2lkIjoiY29tLmV4YW1wbGUubW9udGhseSIsImF1dG9fcmVuZXdfc3RhdHVzIjoiMSIsImdyYWNlX3BlcmlvZF9leHBpcmVzX2RhdGVfbXMiOiIxNzAyNjAwMDAwMDAwIiwiaXNfaW5fYmlsbGluZ19yZXRyeV9wZXJpb2QiOiIwIiwib3JpZ2luYWxfdHJhbnNhY3Rpb25faWQiOiIyMDAwMDAwMDAwMDAwMDExIiwicHJvZHdjdF9pZCI6ImNvbS5leGFtcGxlLm1vbnRobHkifV0sInJlY2VpcHQiOnsiYWRhbV9wdXJjaGFzZV9kYXRlX21zIjoiMTM3NTM0MDQwMDAwMCIsInJlY2VpcHRfY3JlYXRpb25fZGF0ZSI6IjIwMjMtMTEtMTQgMjI6MTM6MjAgRXRjL0dNVCIsInJlY2VpcHRfY3JlYXRpb25fZGF0ZV9tcyI6IjE3MDAwMDAwMDAwMDAiLCJyZWNlaXB0X3R5cGUiOiJQcm9kdWN0aW9uU2FuZGJveCIsInJlcXVlc3RfZGF0ZV9tcyI6IjE3MDAwMDAwMDEwMDAiLCJ2ZXJzaW9uX2V4dGVybmFsX2lkZW4mdGlmaWVyIjowfSwic3RhdHVzIjowfQ=="

    @Test("a reply naming a time beyond Int64 milliseconds is refused when read, not trapped on when written")
    func hugeMillisecondsRefused() throws {
        let bytes = try #require(Data(base64Encoded: Self.hugeMilliseconds))
        #expect(throws: AppStoreClientError(.malformedReply, reason: "")) {
            try VerifyReceiptResponse.decode(Array(bytes))
        }
    }

    @Test("the widest times read, and write back, as whole milliseconds",
          arguments: ["8640000000000000", "-8640000000000000", "\"8640000000000000\"", "\"-62135769600000\"", "1700000000000.5"])
    func widestTimes(_ value: String) throws {
        let reply = try VerifyReceiptResponse.decode(Array(#"{"status":0,"latest_receipt_info":[{"purchase_date_ms":\#(value)}]}"#.utf8))
        let again = try VerifyReceiptResponse.decode(reply.jsonBytes())
        #expect(again.jsonBytes() == reply.jsonBytes())
    }

    @Test("any time read, whole or fractional, in either spelling, writes back the same milliseconds")
    func timesWriteBack() async throws {
        // Beyond year ±140,000 a Date holds one value per two milliseconds or more: the
        // millisecond written must be one that reads back as the date read (CivilTime.AppleDate).
        let whole = Gen.int(in: -8_640_000_000_000_000...8_640_000_000_000_000)
        let digits = Gen.int(in: 0...999)
        await propertyCheck(count: 1000, input: whole, digits) { milliseconds, digits in
            for value in ["\(milliseconds)", "\"\(milliseconds)\"", "\"\(milliseconds).\(digits)\""] {
                let reply = try VerifyReceiptResponse.decode(Array(#"{"status":0,"latest_receipt_info":[{"purchase_date_ms":\#(value)}]}"#.utf8))
                let written = String(decoding: reply.jsonBytes(), as: UTF8.self)
                let again = try VerifyReceiptResponse.decode(Array(written.utf8))
                #expect(String(decoding: again.jsonBytes(), as: UTF8.self) == written, "\(value) written back otherwise")
            }
        }
    }

    @Test("a time past the widest, or not a number of milliseconds, is refused by each spelling",
          arguments: ["8640000000000001", "-8640000000000001", "\"99999999999999999999999\"", "1e300", "9223372036854775807",
                      "\"-\"", "\"--1\"", "\"1-\"", "\"+1\""])
    func pastWidest(_ value: String) {
        #expect(throws: AppStoreClientError(.malformedReply, reason: "")) {
            try VerifyReceiptResponse.decode(Array(#"{"status":0,"latest_receipt_info":[{"purchase_date_ms":\#(value)}]}"#.utf8))
        }
    }

    /// fuzz-verifyreceipt-reply, crash-b70bef18010a316f1481bcc8def8884a90b766bb: a
    /// \`cancellation_date_ms\` of 1699949999999.5 was written back as \"1699950000000\" but
    /// with the text \"… 08:19:59 Etc/GMT\" (rounded in one spelling, cut down in the other),
    /// so the reply read back from its own JSON wrote another date.
    static let halfMillisecond = "eyJlbnZpcm9ubWVudCI6IlNhbmRib3giLCJsYXRlc3RfcmVjZWlwdCI6Ik1JSVQiLCJsYXRlc3RfcmVjZWlwdF9pbmZvIjp7ImV4cGlyZXNfZGF0ZSI6IjIwMjMtMTItMTQgMjI6MTM6MjAgRXRjL0dNVCIsImV4cGlyZXNfZGF0ZV9tcyI6IjE3MDI1OTIwMDAwMDAiLCJpbl9hcHBfb3duZXJzaGlwX3R5cGUiOiJQVVJDSEFTRUQiLCJpc19pbl9pbnRyb19vZmZlcl9wZXJpb2QiOiJmYWxzZSIsImlvZCI6ImZhbHNlIiwib3JpZ2luYWxfdHJhbnNhY3Rpb25faWQiOiIyMDAwMDAwMDAwMDAwMDEwIiwicHJvZHVjdF9pZCI6ImNvbS5leGFtcGxlLm1vbnRobHkiLCJwdXJjaGFzZV9kYXRlIjoiMjAyMy0xMS0xNCAyMjoxMzoyMCBFdGMvR01UIiwicHVyY2hhc2VfZGF0ZV9tcyI6IjE3MDAwMDAwMDAwMDAiLCJwdXJjaGFzZV9kYXRlX3BzdCI6IjIwMjMtMTEtMTQgMZ00OjEzOjIwIEFtZXJpY2EvTG9zX0FuZ2VsZXMiLCJxdWFudGl0eSI6IjEiLCJzdWJzY3JpcHRpb25fZ3JvdXBfaWRlbnRpZmllciI6IjIxMDAwMDAwIiwidHJhbnNhY3Rpb25faWQiOiIyMDAwMDAwMDAwMDAwMDIxIiwid2ViX29yZGVyX2xpbmlfZXRlbV9pZCI6IjMwMDAwMDAwMTEifSwicGVuZGluZ19yZW5ld2FsX2luZm8iOlt7ImF1dG9fcmVuZXdfcHJvZHVjdF9pZCI6ImNvbS5leGFtcGxlLm1vbnRobHkiLCJhdXRvX3JlbmV3X3N0YXR1cyI6IjAiLCJncmFjZV9wZXJpb2RfZXhwaXJlc19kYXRlX21zIjoiMTcwMjYwMDAwMDAwMCIsImlzX2luX2JpbGxpbmdfcmV0cnlfcGVyaW9kIjoiMCIsIm9yaWdpbmFsX3RyYW5zYWN0aW9uX2lkIjoiMjAwMDAwMDAwMDAwMDAxMCIsInByb2R1Y3RfaWQiOiJjb20uZXhhbXBsZS5tb250aGx5In1dLCJyZWNlaXB0Ijp7ImFkYW1faWQiOjAsImFwcF9pdC05MjIzMzcyMDM2ODU0Nzc1ODA4ZW1faWQiOjAsImFwcGxpY2F0aW9uX3ZlcnNpb24iOiIxIiwiYnVuZGxlX2lkIjoiY29tLmV4YW1wbGUuYXBwIiwiZG93bmxvYWRfaWQiOjAsImluX2FwcCI6W3siZXhwaXJlc19kYXRlIjoiMjAyMy0xMi0xNCAyMjoxMzoyMCBFdGMvR01UIiwiZXhwaXJlc19kYXRlX21zIjoiMTcwMjU5MjAwMDAwMCIsImluX2FwcF9vd25lcnNoaXBfdHlwZSI6IlBVUkNIQVNFRCIsImlzX2ljYW5jZWxsYXRpb25fZGF0ZV9tcyI6ImZhbHNlIiwiaXNfdHJpYWxfcGVyaW9kIjoiZmFsc2UiLCJvcmlnaSphbF90cmFuc2FjdGlvbl9pZCI6IjIwMDAwMDAwMDAwMDAwMTAiLCJwcm9kdWN0X2lkIjoiY29tLmV4YW1wbGUubW9udGhseSIsInB1cmNoYXNlX2RhdGUiOiIyMDIzLTExLTE0IDIyOjEzOjIwIEV0Yy9HTVQiLCJwdXJjaGFzZV9kYXRlX21zIjoiMTcwMDAwMDAwMDAwMCIsInB1cmNoYXNlX2RhdGVfcHN0IjoiMjAyMy0xMS0xNCAxNDoxMzoyMCBBbWVyaWNhL0xvc19BbmdlbGVzIiwicXVhbnRpdHkiOiIxIiwic3Vic2NyaXB0aW9uX2dyb3VwX2lkZW50aWZpZXIiOiIyMTAwMDAwMCIsInRyYW5zYWN0aX9uX2lkIjoiMjAwMDAwMDAwMDAwMDAyMSIsIndlYl9vcmRlcl9saW5lX2l0ZW1faWQiOiIzMDAwMDAwMDExIn0seyJjYW5jZWxsYXRpb25fZGF0ZV9tcyI6IjE2OTk5NDk5OTk5OTkuNSIsImNhbmNlbGxhdGlvbl9yZWFzb24iOiIwIiwiaXNfdHJpYWxfcGVyaW9kIjoiMCIsIm9yaWdpbmFsX3RyYW5zYWN0aW9uX2lkIjoiMTAwMDAwMDAwMDAwMDAwMSIsInByb2R1Y3RfaWQiOiJjb20uZXhhbXBsZS5jb2lucyIsInB1cmNoYXNlX2RhdGVfbXMiOjE2OTk5MTM2MDAwMDAsInF1YW50aXR5Ijo1LCJ0cmFuc2FjdGlvbl9pZDAiOjAwMDAxMDAwMDAwMDAwMX1dLCJvcmlnaW5hbF9hcHBsaWNhdGlvbl92ZXJzaW9uIjoiMS4wIiwib3JpZ2luYWxfcHVyY2hhc2VfZGF0ZV9tcyI6IjEzNzUzNDA0MDAwMDAiLCJyZWNlaXB0X2NyZWF0aW9uX2RhdGUiOiIyMDIzLTExLTE0IDIyOjEzOjIwIEV0Yy9HTVQiLCJyZWNlaXB0X2NyZWF0aW9uX2RhdGVfbXMiOiIxNzAwMDAwMDAwMDAwIiwicmVjZWlwdF90eXBlIjoiUHJvZHVjdGlvblNhbmRib3giLCJyZXF1ZXN0X2RhdGVfbXMiOiIxNzAwMDAwMDAxMDAwIiwidmVyc2lvbl9leHRlcm5hbF9pZGVudGlmaWVyIjowfSwic3RhdHVzIjowfQ=="

    @Test("a reply written back reads back and writes the same bytes, both date spellings agreeing")
    func halfMillisecondRoundTrip() throws {
        let bytes = try #require(Data(base64Encoded: Self.halfMillisecond))
        let reply = try VerifyReceiptResponse.decode(Array(bytes))
        let written = reply.jsonBytes()
        let again = try VerifyReceiptResponse.decode(written)
        #expect(again.jsonBytes() == written)
        let text = String(decoding: written, as: UTF8.self)
        #expect(text.contains(#""cancellation_date":"2023-11-14 08:20:00 Etc/GMT","cancellation_date_ms":"1699950000000""#))
    }
}

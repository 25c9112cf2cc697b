import Foundation
import NIOCore
import StoreGateCore
import StoreGateReceipt
import Testing

@testable import StoreGateServer
import HTTPTypes

@Suite("The service's JSON writing")
struct CodingTests {
    struct Sample: JSONWritable {
        let text: String
        let number: Int
        let big: Int64?
        let flag: Bool
        let missing: String?
        let date: Date
        let list: [String]

        func write(to json: inout JSONWriter) {
            json.object { json in
                json.member("text", text)
                json.member("number", number)
                json.member("big", big)
                json.member("flag", flag)
                json.member("missing", missing)
                json.member("date", date)
                json.member("list", list)
                json.key("nested")
                json.object { json in
                    json.key("empty")
                    json.array { _ in }
                    json.key("dynamic \"key\"")
                    json.null()
                }
            }
        }
    }

    static let strings = ["plain", "quote \" backslash \\ slash /", "line\nbreak\ttab\r", "control \u{01}\u{1F}", "unicode é ✓ 🍎", ""]

    @Test("writes JSON that parses back to the same values", arguments: strings)
    func jsonRoundTrip(_ text: String) throws {
        let date = Date(timeIntervalSince1970: 1_594_755_400.123)
        let sample = Sample(text: text, number: -42, big: Int64.min + 1, flag: true, missing: nil, date: date, list: [text, "b"])
        let bytes = JSONWriter.encode(sample)
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        #expect(parsed["text"] as? String == text)
        #expect(parsed["number"] as? Int == -42)
        #expect((parsed["big"] as? NSNumber)?.int64Value == Int64.min + 1)
        #expect(parsed["flag"] as? Bool == true)
        #expect(parsed.keys.contains("missing") == false)
        #expect(parsed["date"] as? String == "2020-07-14T19:36:40.123Z")
        #expect(parsed["list"] as? [String] == [text, "b"])
        #expect(member(parsed, "nested", "empty") as? [Any] != nil)
        #expect((parsed["nested"] as? [String: Any])?.keys.contains("dynamic \"key\"") == true)
    }

    static let dates: [(Double, String)] = [
        (0, "1970-01-01T00:00:00.000Z"),
        (-1, "1969-12-31T23:59:59.000Z"),
        (951_782_400, "2000-02-29T00:00:00.000Z"),
        (1_700_000_000.999, "2023-11-14T22:13:20.999Z"),
        (4_102_444_799.5, "2099-12-31T23:59:59.500Z"),
    ]

    @Test("writes RFC 3339 UTC timestamps with milliseconds", arguments: dates)
    func timestamps(_ seconds: Double, _ expected: String) {
        #expect(CivilTime.rfc3339(Date(timeIntervalSince1970: seconds), milliseconds: true) == expected)
    }
}

@Suite("Reading request bodies")
struct RequestJSONReaderTests {
    static func read(_ text: String) throws(APIError) -> RequestObject {
        try RequestJSONReader.object(ByteBuffer(string: text))
    }

    /// Bodies that are not JSON, and must be refused as `malformed_json`.
    static let malformed: [String] = [
        "", " ", "{", "}", "[]", "\"text\"", "42", "null", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{\"a\":1 \"b\":2}", "{a:1}",
        "{\"a\":'x'}", "{\"a\":01}", "{\"a\":1.}", "{\"a\":-}", "{\"a\":1e}", "{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"\\x\"}",
        "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}", "{\"a\":\"\\ud800\\u0041\"}", "{\"a\":\"tab\there\"}",
        "{\"a\":\"unterminated}", "{} {}", "{}x", String(repeating: "{\"a\":", count: 40) + "1" + String(repeating: "}", count: 40),
        "{\"a\":" + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}",
    ]

    @Test("refuses what is not a JSON object", arguments: malformed)
    func refusesMalformed(_ text: String) {
        #expect(throws: APIError.self) { try Self.read(text) }
        do {
            _ = try Self.read(text)
        } catch {
            #expect(error.code == .malformedJSON)
            #expect(error.status == .badRequest)
        }
    }

    @Test("refuses invalid UTF-8 inside a string")
    func invalidUTF8() {
        var buffer = ByteBuffer(string: "{\"a\":\"")
        buffer.writeBytes([0xC3, 0x28])
        buffer.writeString("\"}")
        #expect(throws: APIError.self) { try RequestJSONReader.object(buffer) }
    }

    @Test("reads strings with every escape, numbers, booleans, null, nesting")
    func reads() throws {
        let object = try Self.read(#" { "s" : "a\"b\\c\/d\b\f\n\r\t\u00e9\ud83c\udf4e" , "i": -42, "big": 99999999999999999999, "f": 1.5, "e": 1e3, "t": true, "n": null, "o": {"x": [1, {"y": "z"}]} } "#)
        #expect(try object.string("s") == "a\"b\\c/d\u{08}\u{0C}\n\r\té🍎")
        #expect(try object.optionalInteger("i") == -42)
        #expect(throws: APIError.self) { try object.optionalInteger("big") }
        #expect(throws: APIError.self) { try object.optionalInteger("f") }
        #expect(throws: APIError.self) { try object.optionalInteger("e") }
        #expect(try object.optionalString("n") == nil)
        #expect(try object.optionalString("absent") == nil)
        let nested = try #require(try object.optionalObject("o"))
        #expect(nested.path == "o")
        #expect(throws: APIError.self) { try object.string("t") }
    }

    @Test("names the member at fault: missing, wrong type, unknown, duplicate")
    func namesTheMember() throws {
        /// "code field" of the error `body` throws.
        func failure(_ body: () throws(APIError) -> Void) -> String? {
            do {
                try body()
            } catch {
                return "\(error.code) \(error.field ?? "-")"
            }
            return nil
        }
        let object = try Self.read(#"{"a": 1, "o": {"b": true}}"#)
        #expect(failure { () throws(APIError) in _ = try object.string("missing") } == "missing_field missing")
        #expect(failure { () throws(APIError) in _ = try object.optionalString("a") } == "invalid_field a")
        let nested = try #require(try object.optionalObject("o"))
        #expect(failure { () throws(APIError) in _ = try nested.optionalString("b") } == "invalid_field o.b")
        #expect(failure { () throws(APIError) in try nested.rejectUnknownMembers(["c"]) } == "unknown_field o.b")
        #expect(failure { () throws(APIError) in _ = try Self.read(#"{"a": 1, "a": 2}"#) } == "duplicate_field a")
        #expect(failure { () throws(APIError) in _ = try Self.read(#"{"o": {"k": 1, "k": 1}}"#) } == "duplicate_field o.k")
    }
}

import Foundation
import StoreGateCore
import Testing

@testable import StoreGateSignedData

@Suite("The strict JSON reader")
struct JSONReaderTests {
    func read(_ text: String) -> JSONObject? {
        try? JSONReader.readObject(Array(text.utf8)).get()
    }

    @Test("reads Apple's value types")
    func values() throws {
        let object = try #require(read(#"{"s":"a\/b\u00e9\n","i":-9223372036854775808,"f":1697679936049.7297,"t":true,"n":null,"a":[1,"x"],"o":{"k":false}}"#))
        #expect(object["s"] == .string("a/bé\n"))
        #expect(object["i"] == .integer(Int64.min))
        #expect(object["f"] == .fraction(1_697_679_936_049.7297))
        #expect(object["t"] == .bool(true))
        #expect(object["n"] == .null)
        #expect(object["a"] == .array([.integer(1), .string("x")]))
        #expect(object["o"] == .object(JSONObject(members: [("k", .bool(false))])))
    }

    @Test("decodes surrogate pairs and multi-byte UTF-8")
    func unicode() throws {
        let object = try #require(read(#"{"e":"\ud83d\ude00","u":"日本"}"#))
        #expect(object["e"] == .string("😀"))
        #expect(object["u"] == .string("日本"))
    }

    @Test("integers beyond 64 bits become fractions, which integer members refuse")
    func bigIntegers() throws {
        let object = try #require(read(#"{"big":92233720368547758070}"#))
        guard case .fraction = object["big"] else {
            Issue.record("expected a fraction")
            return
        }
        #expect(throws: SignedDataError.self) { _ = try object["big"]?.int64("big") }
    }

    @Test("refuses malformed JSON", arguments: [
        "", " ", "[]", "1", "\"s\"", "{", "}", "{\"a\"}", "{\"a\":}", "{\"a\":1,}", "{,}", "{\"a\":1 \"b\":2}",
        "{\"a\":01}", "{\"a\":+1}", "{\"a\":.5}", "{\"a\":1.}", "{\"a\":1e}", "{\"a\":-}", "{\"a\":NaN}", "{\"a\":Infinity}",
        "{\"a\":tru}", "{\"a\":nul}", "{\"a\":\"\\x\"}", "{\"a\":\"\\u12\"}", "{\"a\":\"\\ud800\"}", "{\"a\":\"\\udc00\"}",
        "{\"a\":\"\t\"}", "{\"a\":\"unterminated}", "{\"a\":1}{}", "{\"a\":1} x", "{'a':1}", "{a:1}",
        "{\"a\":[1,2}", "{\"a\":[1,]}", "{\"a\":1e999}",
    ])
    func refusesMalformed(_ text: String) {
        #expect(read(text) == nil)
    }

    @Test("long strings are read eight bytes at a time without missing a special byte at any offset")
    func longStrings() throws {
        for offset in 0..<24 {
            let pad = String(repeating: "a", count: offset)
            let tail = String(repeating: "b", count: 17)
            #expect(read("{\"s\":\"\(pad)\\\"\(tail)\"}")?["s"] == .string(pad + "\"" + tail))
            #expect(read("{\"s\":\"\(pad)é\(tail)\"}")?["s"] == .string(pad + "é" + tail))
            #expect(read("{\"s\":\"\(pad)\(tail)\"}")?["s"] == .string(pad + tail))
            #expect(read("{\"s\":\"\(pad)\u{01}\(tail)\"}") == nil)
            #expect(read("{\"s\":\"\(pad)\(tail)") == nil)
        }
    }

    @Test("refuses duplicate member names")
    func duplicates() {
        #expect(read(#"{"alg":"ES256","alg":"none"}"#) == nil)
        #expect(read(#"{"a":{"b":1,"b":2}}"#) == nil)
        #expect(read(#"{"a":{"b":1},"b":2}"#) != nil)
    }

    @Test("finds duplicates in large objects too (past the linear scan, by a set)")
    func largeObjects() {
        let members = (0..<20_000).map { "\"k\($0)\":\($0)" }
        #expect(read("{" + members.joined(separator: ",") + "}")?.members.count == 20_000)
        #expect(read("{" + (members + ["\"k19999\":0"]).joined(separator: ",") + "}") == nil)
        #expect(read("{" + (members + ["\"k3\":0"]).joined(separator: ",") + "}") == nil)
        #expect(read("{" + (members.prefix(40) + ["\"k39\":0"]).joined(separator: ",") + "}") == nil)
        #expect(read("{" + (members.prefix(31) + ["\"k0\":0"]).joined(separator: ",") + "}") == nil)
    }

    @Test("refuses invalid UTF-8 inside strings")
    func invalidUTF8() {
        #expect((try? JSONReader.readObject([0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xC3, 0x28, 0x22, 0x7D]).get()) == nil)
        #expect((try? JSONReader.readObject([0x7B, 0x22, 0xFF, 0x22, 0x3A, 0x31, 0x7D]).get()) == nil)
    }

    @Test("the strict UTF-8 conversion agrees with the standard library's validation",
          arguments: [
              [0x61, 0x62], [0xC3, 0xA9], [0xEF, 0xBF, 0xBD], [0xF0, 0x9F, 0x98, 0x80], [0x7F], [],
              [0xC3, 0x28], [0xFF], [0x80], [0xC0, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
              // Three bytes repaired into one U+FFFD, itself three bytes: the same length, not the same bytes.
              [0xF0, 0x9F, 0x98], [0x61, 0xF0, 0x9F, 0x98, 0x62],
          ] as [[UInt8]])
    func strictUTF8(_ bytes: [UInt8]) {
        let strict = bytes.withUnsafeBufferPointer { String(strictUTF8: $0) }
        #expect(strict == String(validating: bytes, as: UTF8.self))
        // Inside a JSON string (non-ASCII takes the validating path, an escape the slow one).
        for prefix in [[], Array(#"\n"#.utf8)] {
            let json = Array(#"{"a":""#.utf8) + prefix + bytes + Array(#""}"#.utf8)
            let read: String? = (try? JSONReader.readObject(json).get()).flatMap { object in
                if case .string(let text) = object["a"] { text } else { nil }
            }
            #expect(read == strict.map { (prefix.isEmpty ? "" : "\n") + $0 })
        }
    }

    @Test("the strict UTF-8 conversion agrees with the standard library on random bytes")
    func strictUTF8Random() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            let bytes = (0..<Int.random(in: 0...6, using: &generator)).map { _ in UInt8.random(in: 0x7E...0xFF, using: &generator) }
            let strict = bytes.withUnsafeBufferPointer { String(strictUTF8: $0) }
            #expect(strict == String(validating: bytes, as: UTF8.self), "\(bytes)")
        }
    }

    @Test("refuses nesting deeper than the limit, accepts it up to the limit")
    func depth() {
        let deep = String(repeating: "{\"a\":", count: 40) + "1" + String(repeating: "}", count: 40)
        #expect(read(deep) == nil)
        let fine = String(repeating: "{\"a\":", count: 32) + "1" + String(repeating: "}", count: 32)
        #expect(read(fine) != nil)
    }
}

@Suite("Strict base64url")
struct Base64URLTests {
    func decode(_ text: String) -> [UInt8]? {
        Array(text.utf8).withUnsafeBufferPointer { Base64.decode($0, mode: .url) }
    }

    @Test("round-trips every length against Foundation's decoder")
    func roundTrip() {
        for length in 0..<70 {
            let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
            let encoded = Data(bytes).base64EncodedString()
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: "=", with: "")
            #expect(decode(encoded) == bytes)
        }
    }

    @Test("refuses padding, the standard alphabet, stray characters, a dangling character, trailing bits",
          arguments: ["AA==", "A+/A", "AB/C", "AA A", "A", "AAAAA", "AB", "AAB", "A\n", "é"])
    func refuses(_ text: String) {
        #expect(decode(text) == nil)
    }
}

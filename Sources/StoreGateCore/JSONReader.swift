/// The strict RFC 8259 JSON reader every module uses on untrusted bytes: the header and
/// payload of a JWS, the service's request bodies.
///
/// Written by hand because it sits on the hot path of every verification: one pass over the
/// bytes, strings built straight from the buffer, no Foundation. It is stricter than most
/// readers, since everything it reads is untrusted:
/// - UTF-8 must be valid; control characters in strings and lone surrogates are refused;
/// - member names must be unique within an object;
/// - numbers follow the JSON grammar exactly (no `+1`, `01`, `.5`, `NaN`);
/// - nesting is limited to ``maxDepth``; nothing may follow the top-level value.
public struct JSONReader {
    /// Why a text is not JSON, with the byte offset where reading stopped and the member at fault.
    public struct Failure: Error, Sendable {
        /// A member name appears twice in one object, or anything else.
        public enum Kind: Sendable {
            case duplicateMember
            case malformed
        }

        public let kind: Kind
        /// For people; never compared.
        public let reason: String
        /// The byte offset where reading stopped.
        public let offset: Int
        /// The members and array indices leading to the failure, outermost first
        /// (`["expectations", "productId"]`); filled in only when reading fails.
        public internal(set) var path: [String] = []

        init(kind: Kind, reason: String, offset: Int) {
            self.kind = kind
            self.reason = reason
            self.offset = offset
        }

        /// The path as `expectations.productId`, `items[2].name`.
        public var dottedPath: String {
            var text = ""
            for part in path {
                if part.hasPrefix("[") || text.isEmpty { text += part } else { text += "." + part }
            }
            return text
        }

        func within(_ part: String) -> Failure {
            var copy = self
            copy.path.insert(part, at: 0)
            return copy
        }
    }

    /// Deepest nesting of arrays and objects accepted (Apple's payloads nest three levels).
    public static let maxDepth = 32

    /// Up to this many members, duplicate names are found by a linear scan.
    static let linearScanLimit = 32

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0

    private init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Reads `bytes` as one JSON value that must be an object.
    public static func readObject(_ bytes: [UInt8]) -> Result<JSONObject, Failure> {
        bytes.withUnsafeBufferPointer { buffer in
            Result { () throws(Failure) -> JSONObject in try readObject(buffer: buffer) }
        }
    }

    /// Reads contiguous bytes as one JSON value that must be an object.
    public static func readObject(_ bytes: UnsafeRawBufferPointer) -> Result<JSONObject, Failure> {
        let buffer = bytes.bindMemory(to: UInt8.self)
        return Result { () throws(Failure) -> JSONObject in try readObject(buffer: buffer) }
    }

    private static func readObject(buffer: UnsafeBufferPointer<UInt8>) throws(Failure) -> JSONObject {
        var reader = JSONReader(buffer)
        reader.skipWhitespace()
        guard reader.peek() == UInt8(ascii: "{") else {
            throw reader.failure("expected a JSON object")
        }
        let value = try reader.readValue()
        reader.skipWhitespace()
        guard reader.index == buffer.count else {
            throw reader.failure("unexpected data after the JSON object")
        }
        guard case .object(let object) = value else {
            throw reader.failure("expected a JSON object")
        }
        return object
    }

    private func failure(_ reason: String, kind: Failure.Kind = .malformed) -> Failure {
        Failure(kind: kind, reason: reason, offset: index)
    }

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func expect(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw failure("truncated literal") }
        let start = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != start[offset] {
            throw failure("invalid literal")
        }
        index += count
    }

    private mutating func readValue() throws(Failure) -> JSONValue {
        skipWhitespace()
        guard let byte = peek() else { throw failure("unexpected end of input") }
        switch byte {
        case UInt8(ascii: "{"): return .object(try readObjectBody())
        case UInt8(ascii: "["): return .array(try readArrayBody())
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"):
            try expect("true")
            return .bool(true)
        case UInt8(ascii: "f"):
            try expect("false")
            return .bool(false)
        case UInt8(ascii: "n"):
            try expect("null")
            return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return try readNumber()
        default:
            throw failure("unexpected character")
        }
    }

    private mutating func enter() throws(Failure) {
        depth += 1
        guard depth <= Self.maxDepth else { throw failure("nesting deeper than \(Self.maxDepth)") }
    }

    private mutating func readObjectBody() throws(Failure) -> JSONObject {
        try enter()
        index += 1  // {
        var members: [(key: String, value: JSONValue)] = []
        members.reserveCapacity(24)
        var names = Set<String>()
        skipWhitespace()
        if peek() == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return JSONObject(members: members)
        }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let keyStart = index
            let key = try readString()
            // A linear scan for Apple's small objects; a set past that, so an object with
            // thousands of members costs linear, not quadratic, time.
            let isDuplicate: Bool
            if members.count < Self.linearScanLimit {
                isDuplicate = members.contains { $0.key == key }
            } else {
                if names.isEmpty {
                    names = Set(members.map(\.key))
                }
                isDuplicate = !names.insert(key).inserted
            }
            if isDuplicate {
                index = keyStart
                throw failure("duplicate member name", kind: .duplicateMember).within(key)
            }
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            let value: JSONValue
            do throws(Failure) {
                value = try readValue()
            } catch {
                throw error.within(key)
            }
            members.append((key, value))
            skipWhitespace()
            guard let next = peek() else { throw failure("unterminated object") }
            index += 1
            if next == UInt8(ascii: "}") { break }
            guard next == UInt8(ascii: ",") else {
                index -= 1
                throw failure("expected ',' or '}'")
            }
        }
        depth -= 1
        return JSONObject(members: members)
    }

    private mutating func readArrayBody() throws(Failure) -> [JSONValue] {
        try enter()
        index += 1  // [
        var elements: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return elements
        }
        while true {
            do throws(Failure) {
                elements.append(try readValue())
            } catch {
                throw error.within("[\(elements.count)]")
            }
            skipWhitespace()
            guard let next = peek() else { throw failure("unterminated array") }
            index += 1
            if next == UInt8(ascii: "]") { break }
            guard next == UInt8(ascii: ",") else {
                index -= 1
                throw failure("expected ',' or ']'")
            }
        }
        depth -= 1
        return elements
    }

    /// Reads a string starting at its opening quote.
    private mutating func readString() throws(Failure) -> String {
        index += 1  // opening quote
        let start = index
        var highBits: UInt8 = 0
        // Fast path: no escapes.
        while index < bytes.count {
            // Eight plain ASCII bytes at a time (certificates and nested JWS are long strings).
            if let base = bytes.baseAddress {
                while bytes.count - index >= 8, Self.isPlain(UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self)) {
                    index += 8
                }
                guard index < bytes.count else { break }
            }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
                index += 1
                if highBits & 0x80 == 0 {
                    return String(decoding: slice, as: UTF8.self)
                }
                guard let text = String(strictUTF8: slice) else {
                    index = start
                    throw failure("string is not valid UTF-8")
                }
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw failure("control character in string") }
            highBits |= byte
            index += 1
        }
        guard index < bytes.count else { throw failure("unterminated string") }
        // Slow path: unescape into a buffer.
        var scratch = Array(UnsafeBufferPointer(rebasing: bytes[start..<index]))
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = scratch.withUnsafeBufferPointer({ String(strictUTF8: $0) }) else {
                    throw failure("string is not valid UTF-8")
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                guard let escape = peek() else { throw failure("unterminated escape") }
                index += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scratch.append(escape)
                case UInt8(ascii: "b"): scratch.append(0x08)
                case UInt8(ascii: "f"): scratch.append(0x0C)
                case UInt8(ascii: "n"): scratch.append(0x0A)
                case UInt8(ascii: "r"): scratch.append(0x0D)
                case UInt8(ascii: "t"): scratch.append(0x09)
                case UInt8(ascii: "u"): try appendUnicodeEscape(to: &scratch)
                default:
                    index -= 1
                    throw failure("invalid escape")
                }
            default:
                if byte < 0x20 { throw failure("control character in string") }
                scratch.append(byte)
                index += 1
            }
        }
        throw failure("unterminated string")
    }

    /// Whether none of the eight bytes in `word` is a quote, a backslash, a control
    /// character or non-ASCII (SWAR: each test sets a byte's high bit).
    private static func isPlain(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22)
        let backslash = word ^ (ones &* 0x5C)
        let hasQuote = (quote &- ones) & ~quote
        let hasBackslash = (backslash &- ones) & ~backslash
        let hasControl = (word &- ones &* 0x20) & ~word
        return (hasQuote | hasBackslash | hasControl | word) & highs == 0
    }

    private mutating func readHex4() throws(Failure) -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("truncated \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw failure("invalid \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func appendUnicodeEscape(to scratch: inout [UInt8]) throws(Failure) {
        var scalar = try readHex4()
        if (0xD800...0xDBFF).contains(scalar) {
            guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("lone high surrogate")
            }
            index += 2
            let low = try readHex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("invalid low surrogate") }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(scalar) {
            throw failure("lone low surrogate")
        }
        guard let unicode = Unicode.Scalar(scalar) else { throw failure("invalid code point") }
        UTF8.encode(unicode) { scratch.append($0) }
    }

    private mutating func readNumber() throws(Failure) -> JSONValue {
        let start = index
        var negative = false
        if bytes[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard let first = peek(), first >= UInt8(ascii: "0"), first <= UInt8(ascii: "9") else {
            throw failure("invalid number")
        }
        // Integer part; accumulate as a negative magnitude so Int64.min fits.
        var magnitude: Int64 = 0
        var overflow = false
        if first == UInt8(ascii: "0") {
            index += 1
            if let next = peek(), next >= UInt8(ascii: "0"), next <= UInt8(ascii: "9") {
                throw failure("leading zero in number")
            }
        } else {
            while let digit = peek(), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") {
                let (times10, o1) = magnitude.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.subtractingReportingOverflow(Int64(digit - UInt8(ascii: "0")))
                overflow = overflow || o1 || o2
                magnitude = sum
                index += 1
            }
        }
        var isInteger = true
        if peek() == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let digit = peek(), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else {
                throw failure("invalid fraction")
            }
            while let digit = peek(), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") { index += 1 }
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") else {
                throw failure("invalid exponent")
            }
            while let digit = peek(), digit >= UInt8(ascii: "0"), digit <= UInt8(ascii: "9") { index += 1 }
        }
        if isInteger && !overflow {
            if negative { return .integer(magnitude) }
            if magnitude != Int64.min { return .integer(-magnitude) }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self)
        guard let value = Double(text), value.isFinite else {
            index = start
            throw failure("number out of range")
        }
        return .fraction(value)
    }
}

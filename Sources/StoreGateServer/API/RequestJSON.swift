import NIOCore

/// A request body the service reads: a JSON object, with every refusal naming the member.
protocol JSONRequestBody {
    init(_ object: RequestObject) throws(APIError)
}

/// One JSON value of a request body.
enum RequestValue {
    case string(String)
    /// A number; `integer` is its value when it is a whole number within `Int64`.
    case number(integer: Int64?)
    case bool(Bool)
    case null
    case object(RequestObject)
    case array([RequestValue])

    var kind: String {
        switch self {
        case .string: return "a string"
        case .number: return "a number"
        case .bool: return "a boolean"
        case .null: return "null"
        case .object: return "an object"
        case .array: return "an array"
        }
    }
}

/// A JSON object of a request body, and where it is (`""` for the body, `expectations`, …).
struct RequestObject {
    let path: String
    let members: [String: RequestValue]

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Refuses members outside `allowed` (a misspelt expectation must not be ignored).
    func rejectUnknownMembers(_ allowed: Set<String>) throws(APIError) {
        for key in members.keys.sorted() where !allowed.contains(key) {
            throw APIError.badField(name(key), "unknown_field", "'\(name(key))' is not a member of this request")
        }
    }

    func string(_ key: String) throws(APIError) -> String {
        guard let value = try optionalString(key) else {
            throw APIError.badField(name(key), "missing_field", "'\(name(key))' is required")
        }
        return value
    }

    func optionalString(_ key: String) throws(APIError) -> String? {
        switch members[key] {
        case .none, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw APIError.badField(name(key), "invalid_field", "'\(name(key))' must be a string, not \(other.kind)")
        }
    }

    func optionalInteger(_ key: String) throws(APIError) -> Int? {
        switch members[key] {
        case .none, .null?: return nil
        case .number(let integer?)? where integer >= Int64(Int.min) && integer <= Int64(Int.max): return Int(integer)
        case .number?: throw APIError.badField(name(key), "invalid_field", "'\(name(key))' must be a whole number")
        case let other?: throw APIError.badField(name(key), "invalid_field", "'\(name(key))' must be an integer, not \(other.kind)")
        }
    }

    func optionalObject(_ key: String) throws(APIError) -> RequestObject? {
        switch members[key] {
        case .none, .null?: return nil
        case .object(let object)?: return object
        case let other?: throw APIError.badField(name(key), "invalid_field", "'\(name(key))' must be an object, not \(other.kind)")
        }
    }
}

/// Reads request bodies: RFC 8259 JSON, strictly — invalid UTF-8, unescaped control
/// characters, lone surrogates, duplicate member names and nesting deeper than 32 are
/// refused — in one pass over the buffer.
struct RequestJSONReader {
    static let maximumDepth = 32

    private let bytes: UnsafeRawBufferPointer
    private var index = 0

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    /// The body's top-level object.
    static func object(_ buffer: ByteBuffer) throws(APIError) -> RequestObject {
        let result: Result<RequestObject, APIError> = buffer.withUnsafeReadableBytes { raw in
            var reader = RequestJSONReader(raw)
            do throws(APIError) {
                reader.skipWhitespace()
                guard reader.index < raw.count else {
                    throw APIError(.badRequest, "malformed_json", "the request body is empty; a JSON object is expected")
                }
                guard raw[reader.index] == UInt8(ascii: "{") else {
                    throw APIError(.badRequest, "malformed_json", "the request body must be a JSON object")
                }
                let object = try reader.readObject(path: "", depth: 1)
                reader.skipWhitespace()
                guard reader.index == raw.count else { throw reader.malformed("data after the JSON object") }
                return .success(object)
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    // MARK: Values

    private mutating func readValue(path: String, depth: Int) throws(APIError) -> RequestValue {
        skipWhitespace()
        guard index < bytes.count else { throw malformed("unexpected end of the body") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try readObject(path: path, depth: depth + 1))
        case UInt8(ascii: "["): return .array(try readArray(path: path, depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try readString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try readNumber()
        default: throw malformed("unexpected character")
        }
    }

    private mutating func readObject(path: String, depth: Int) throws(APIError) -> RequestObject {
        guard depth <= Self.maximumDepth else { throw malformed("nesting deeper than \(Self.maximumDepth)") }
        index += 1  // {
        var members: [String: RequestValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return RequestObject(path: path, members: members)
        }
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw malformed("expected a member name") }
            let key = try readString()
            let memberPath = path.isEmpty ? key : "\(path).\(key)"
            guard members[key] == nil else {
                throw APIError.badField(memberPath, "duplicate_field", "'\(memberPath)' appears twice")
            }
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw malformed("expected ':'") }
            index += 1
            members[key] = try readValue(path: memberPath, depth: depth)
            skipWhitespace()
            guard index < bytes.count else { throw malformed("unexpected end of the body") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "}") {
                index += 1
                return RequestObject(path: path, members: members)
            } else {
                throw malformed("expected ',' or '}'")
            }
        }
    }

    private mutating func readArray(path: String, depth: Int) throws(APIError) -> [RequestValue] {
        guard depth <= Self.maximumDepth else { throw malformed("nesting deeper than \(Self.maximumDepth)") }
        index += 1  // [
        var elements: [RequestValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return elements
        }
        while true {
            elements.append(try readValue(path: "\(path)[\(elements.count)]", depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw malformed("unexpected end of the body") }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
            } else if bytes[index] == UInt8(ascii: "]") {
                index += 1
                return elements
            } else {
                throw malformed("expected ',' or ']'")
            }
        }
    }

    private mutating func readString() throws(APIError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escape before the closing quote.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeRawBufferPointer(rebasing: bytes[start..<index])
                index += 1
                guard let string = String(validating: slice, as: UTF8.self) else { throw malformed("a string is not valid UTF-8") }
                return string
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw malformed("a control character inside a string") }
            index += 1
        }
        var decoded: [UInt8] = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                index += 1
                guard let string = String(validating: decoded, as: UTF8.self) else { throw malformed("a string is not valid UTF-8") }
                return string
            }
            guard byte >= 0x20 else { throw malformed("a control character inside a string") }
            if byte != UInt8(ascii: "\\") {
                decoded.append(byte)
                index += 1
                continue
            }
            index += 1
            guard index < bytes.count else { break }
            let escape = bytes[index]
            index += 1
            switch escape {
            case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): decoded.append(escape)
            case UInt8(ascii: "b"): decoded.append(0x08)
            case UInt8(ascii: "f"): decoded.append(0x0C)
            case UInt8(ascii: "n"): decoded.append(0x0A)
            case UInt8(ascii: "r"): decoded.append(0x0D)
            case UInt8(ascii: "t"): decoded.append(0x09)
            case UInt8(ascii: "u"):
                var scalar = try readHex4()
                if (0xD800...0xDBFF).contains(scalar) {
                    guard index + 1 < bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                        throw malformed("a lone surrogate in a string")
                    }
                    index += 2
                    let low = try readHex4()
                    guard (0xDC00...0xDFFF).contains(low) else { throw malformed("a lone surrogate in a string") }
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                } else if (0xDC00...0xDFFF).contains(scalar) {
                    throw malformed("a lone surrogate in a string")
                }
                guard let unicode = Unicode.Scalar(scalar) else { throw malformed("an invalid \\u escape") }
                decoded.append(contentsOf: Array(String(Character(unicode)).utf8))
            default:
                throw malformed("an invalid escape in a string")
            }
        }
        throw malformed("an unterminated string")
    }

    private mutating func readHex4() throws(APIError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw malformed("an invalid \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt32
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = UInt32(byte - UInt8(ascii: "0"))
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = UInt32(byte - UInt8(ascii: "a") + 10)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = UInt32(byte - UInt8(ascii: "A") + 10)
            default: throw malformed("an invalid \\u escape")
            }
            value = value << 4 | digit
            index += 1
        }
        return value
    }

    private mutating func readNumber() throws(APIError) -> RequestValue {
        var isNegative = false
        if bytes[index] == UInt8(ascii: "-") {
            isNegative = true
            index += 1
        }
        let integerStart = index
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        let integerDigits = index - integerStart
        guard integerDigits > 0 else { throw malformed("an invalid number") }
        guard !(integerDigits > 1 && bytes[integerStart] == UInt8(ascii: "0")) else { throw malformed("a number with a leading zero") }
        var isWhole = true
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            isWhole = false
            index += 1
            let fractionStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > fractionStart else { throw malformed("an invalid number") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            isWhole = false
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            let exponentStart = index
            while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
            guard index > exponentStart else { throw malformed("an invalid number") }
        }
        guard isWhole, integerDigits <= 19 else { return .number(integer: nil) }
        var magnitude: UInt64 = 0
        for position in integerStart..<index {
            magnitude = magnitude * 10 + UInt64(bytes[position] - UInt8(ascii: "0"))
        }
        if isNegative {
            return .number(integer: magnitude <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- magnitude) : nil)
        }
        return .number(integer: magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil)
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(APIError) {
        let length = literal.utf8CodeUnitCount
        guard index + length <= bytes.count else { throw malformed("an invalid literal") }
        let matches = literal.withUTF8Buffer { expected in
            (0..<length).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        guard matches else { throw malformed("an invalid literal") }
        index += length
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func malformed(_ problem: String) -> APIError {
        APIError(.badRequest, "malformed_json", "the request body is not valid JSON: \(problem) at byte \(index)")
    }
}

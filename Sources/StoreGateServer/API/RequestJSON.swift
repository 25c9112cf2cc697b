import NIOCore
import StoreGateCore
import HTTPTypes

/// A request body the service reads: a JSON object, with every refusal naming the member.
protocol JSONRequestBody {
    init(_ object: RequestObject) throws(APIError)
}

/// A JSON object of a request body, and where it is (`""` for the body, `expectations`, …).
struct RequestObject {
    let path: String
    let object: JSONObject

    private func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Refuses members outside `allowed` (a misspelt expectation must not be ignored).
    func rejectUnknownMembers(_ allowed: Set<String>) throws(APIError) {
        for key in object.members.map(\.key).sorted() where !allowed.contains(key) {
            throw APIError.badField(name(key), .unknownField, "'\(name(key))' is not a member of this request")
        }
    }

    func string(_ key: String) throws(APIError) -> String {
        guard let value = try optionalString(key) else {
            throw APIError.badField(name(key), .missingField, "'\(name(key))' is required")
        }
        return value
    }

    func optionalString(_ key: String) throws(APIError) -> String? {
        switch object[key] {
        case .none, .null?: return nil
        case .string(let value)?: return value
        case let other?: throw wrongType(key, "a string", other)
        }
    }

    func optionalBool(_ key: String) throws(APIError) -> Bool? {
        switch object[key] {
        case .none, .null?: return nil
        case .bool(let value)?: return value
        case let other?: throw wrongType(key, "true or false", other)
        }
    }

    func optionalStrings(_ key: String) throws(APIError) -> [String]? {
        switch object[key] {
        case .none, .null?: return nil
        case .array(let values)?:
            var strings: [String] = []
            for value in values {
                guard case .string(let text) = value else { throw APIError.badField(name(key), .invalidField, "'\(name(key))' must be an array of strings") }
                strings.append(text)
            }
            return strings
        case let other?: throw wrongType(key, "an array of strings", other)
        }
    }

    func optionalInteger(_ key: String) throws(APIError) -> Int? {
        switch object[key] {
        case .none, .null?: return nil
        case .integer(let integer)? where integer >= Int64(Int.min) && integer <= Int64(Int.max): return Int(integer)
        case .integer?, .fraction?: throw APIError.badField(name(key), .invalidField, "'\(name(key))' must be a whole number")
        case let other?: throw wrongType(key, "an integer", other)
        }
    }

    func optionalObject(_ key: String) throws(APIError) -> RequestObject? {
        switch object[key] {
        case .none, .null?: return nil
        case .object(let nested)?: return RequestObject(path: name(key), object: nested)
        case let other?: throw wrongType(key, "an object", other)
        }
    }

    private func wrongType(_ key: String, _ expected: String, _ found: JSONValue) -> APIError {
        APIError.badField(name(key), .invalidField, "'\(name(key))' must be \(expected), not \(found.typeName)")
    }
}

/// Reads request bodies with Core's strict JSON reader (RFC 8259: invalid UTF-8, unescaped
/// control characters, lone surrogates, duplicate member names and nesting deeper than 32 are
/// refused) in one pass over the buffer.
enum RequestJSONReader {
    /// The body's top-level object.
    static func object(_ buffer: ByteBuffer) throws(APIError) -> RequestObject {
        let result = buffer.withUnsafeReadableBytes { raw -> Result<JSONObject, JSONReader.Failure>? in
            guard raw.contains(where: { ![0x20, 0x0A, 0x0D, 0x09].contains($0) }) else { return nil }
            return JSONReader.readObject(raw)
        }
        switch result {
        case nil:
            throw APIError(.badRequest, .malformedJSON, "the request body is empty; a JSON object is expected")
        case .success(let object)?:
            return RequestObject(path: "", object: object)
        case .failure(let failure)?:
            switch failure.kind {
            case .duplicateMember:
                throw APIError.badField(failure.dottedPath, .duplicateField, "'\(failure.dottedPath)' appears twice")
            case .malformed:
                let at = failure.path.isEmpty ? "" : " in '\(failure.dottedPath)'"
                throw APIError(.badRequest, .malformedJSON, "the request body is not a JSON object: \(failure.reason) at byte \(failure.offset)\(at)")
            }
        }
    }
}

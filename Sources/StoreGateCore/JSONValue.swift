
/// A JSON value read from untrusted bytes by ``JSONReader``.
///
/// Numbers keep whether they were written as integers: Apple's identifiers (`appAppleId`,
/// `price`) must be exact integers, while dates may carry fractional milliseconds (Xcode).
public enum JSONValue: Sendable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    /// A number with a fraction or an exponent, or an integer too large for `Int64`.
    case fraction(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)

    /// The name of the JSON type, for error messages.
    public var typeName: String {
        switch self {
        case .null: return "null"
        case .bool: return "boolean"
        case .integer, .fraction: return "number"
        case .string: return "string"
        case .array: return "array"
        case .object: return "object"
        }
    }
}

/// A JSON object: its members in document order, every name unique (``JSONReader`` refuses
/// duplicate names, the classic `{"alg":"ES256","alg":"none"}` trick).
public struct JSONObject: Sendable, Hashable {
    /// The members in document order.
    public var members: [(key: String, value: JSONValue)]

    public init(members: [(key: String, value: JSONValue)]) {
        self.members = members
    }

    /// The value of the member named `key`, if present.
    public subscript(key: String) -> JSONValue? {
        for member in members where member.key == key {
            return member.value
        }
        return nil
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(members.count)
        for member in members {
            hasher.combine(member.key)
            hasher.combine(member.value)
        }
    }
}


/// A JSON value read by ``JSONReader`` encodes as itself, so an `Encodable` document (a
/// command-line report printed by `JSONEncoder`) can embed JSON written elsewhere.
extension JSONValue: Encodable {
    /// Encodes the value as the JSON type it holds: an integer stays an integer.
    public func encode(to encoder: any Encoder) throws {
        if case .object(let object) = self {
            return try object.encode(to: encoder)
        }
        if case .array(let elements) = self {
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
            return
        }
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .fraction(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .object, .array: break  // encoded above
        }
    }
}

extension JSONObject: Encodable {
    /// Encodes the members, in document order, under their own names.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: MemberName.self)
        for member in members {
            try container.encode(member.value, forKey: MemberName(stringValue: member.key))
        }
    }

    /// A member name as a coding key.
    private struct MemberName: CodingKey {
        let stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }
}

extension JSONWritable {
    /// Encodes this value as the JSON object ``write(to:)`` writes, read back by ``JSONReader``.
    ///
    /// How a type that writes itself is also `Encodable` without a second spelling of its
    /// members: an `encode(to:)` that calls this gives `JSONEncoder` the same members, names
    /// and values the writer gives the service's replies. Slower than the writer; for
    /// reports, not for hot paths.
    ///
    /// - Throws: `EncodingError.invalidValue` when what `write(to:)` wrote is not a JSON object.
    package func encodeAsWritten(to encoder: any Encoder) throws {
        switch JSONReader.readObject(JSONWriter.encode(self)) {
        case .success(let object):
            try object.encode(to: encoder)
        case .failure(let failure):
            throw EncodingError.invalidValue(self, .init(codingPath: encoder.codingPath, debugDescription: "not a JSON object: \(failure.reason)"))
        }
    }
}

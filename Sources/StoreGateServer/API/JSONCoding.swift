import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// JSON replies, written by ``JSONWriter``; `application/json`.
enum JSONReply {
    /// Encodes Apple's payload types (which define their own `Encodable` shape).
    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }()

    /// A reply with `value` as its JSON body.
    static func response(_ value: some JSONWritable, status: HTTPResponse.Status = .ok) -> Response {
        let bytes = JSONWriter.encode(value)
        return Response(status: status, headers: [.contentType: "application/json"], body: .init(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// `value` encoded by `JSONEncoder`, for splicing into a reply; `null` when it cannot be
    /// encoded (only non-finite numbers fail, and Apple's payloads hold none).
    static func encoded(_ value: some Encodable) -> [UInt8] {
        do {
            return Array(try encoder.encode(value))
        } catch {
            return Array("null".utf8)
        }
    }
}

/// `{"status": "ok"}`.
struct HealthReply: JSONWritable {
    func write(to json: inout JSONWriter) {
        json.object { $0.member("status", "ok") }
    }
}

/// Request bodies: read within the size limit, decoded with errors that name the field.
enum JSONRequest {
    private static let decoder = JSONDecoder()

    /// Reads the whole body, refusing more than `limit` bytes with 413.
    static func body(_ request: Request, limit: Int) async throws(APIError) -> ByteBuffer {
        if let length = request.headers[.contentLength].flatMap({ Int($0) }), length > limit {
            throw APIError.bodyTooLarge(limit)
        }
        do {
            return try await request.body.collect(upTo: limit)
        } catch is NIOTooManyBytesError {
            throw APIError.bodyTooLarge(limit)
        } catch {
            throw APIError(.badRequest, "body_unreadable", "the request body could not be read")
        }
    }

    /// Decodes a JSON object body into `T`, naming the member at fault on failure.
    static func decode<T: Decodable>(_ type: T.Type, from buffer: ByteBuffer) throws(APIError) -> T {
        guard buffer.readableBytes > 0 else {
            throw APIError(.badRequest, "malformed_json", "the request body is empty; a JSON object is expected")
        }
        do {
            return try buffer.withUnsafeReadableBytes { bytes in
                try decoder.decode(T.self, from: Data(bytes))
            }
        } catch let error as UnknownMember {
            throw APIError.badField(error.path, "unknown_field", "'\(error.path)' is not a member of this request")
        } catch let error as InvalidMember {
            throw APIError.badField(error.path, error.code, error.message)
        } catch let error as DecodingError {
            throw describe(error)
        } catch {
            throw APIError(.badRequest, "malformed_json", "the request body is not valid JSON")
        }
    }

    private static func describe(_ error: DecodingError) -> APIError {
        switch error {
        case .keyNotFound(let key, let context):
            let path = Self.path(context.codingPath + [key])
            return APIError.badField(path, "missing_field", "'\(path)' is required")
        case .typeMismatch(let type, let context), .valueNotFound(let type, let context):
            let path = Self.path(context.codingPath)
            if path.isEmpty {
                return APIError(.badRequest, "malformed_json", "the request body must be a JSON object")
            }
            return APIError.badField(path, "invalid_field", "'\(path)' must be \(Self.kind(type))")
        case .dataCorrupted(let context):
            let path = Self.path(context.codingPath)
            if path.isEmpty {
                return APIError(.badRequest, "malformed_json", "the request body is not valid JSON")
            }
            return APIError.badField(path, "invalid_field", "'\(path)' has an invalid value")
        @unknown default:
            return APIError(.badRequest, "malformed_json", "the request body is not valid JSON")
        }
    }

    static func path(_ keys: [any CodingKey]) -> String {
        var path = ""
        for key in keys {
            if let index = key.intValue {
                path += "[\(index)]"
            } else {
                path += path.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return path
    }

    private static func kind(_ type: Any.Type) -> String {
        switch type {
        case is String.Type: return "a string"
        case is Int.Type, is Int64.Type: return "an integer"
        case is Bool.Type: return "true or false"
        default: return "a JSON object"
        }
    }
}

/// A coding key for any member name.
struct AnyCodingKey: CodingKey {
    let stringValue: String
    let intValue: Int? = nil
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { return nil }
}

/// A request member the endpoint does not know: refused, so a misspelt expectation is never
/// silently ignored.
struct UnknownMember: Error {
    let path: String
}

/// A request member whose value is refused by the endpoint's own rules.
struct InvalidMember: Error {
    let path: String
    let code: String
    let message: String
}

extension Decoder {
    /// Throws ``UnknownMember`` for a member outside `allowed`.
    func rejectUnknownMembers(_ allowed: Set<String>) throws {
        let container = try self.container(keyedBy: AnyCodingKey.self)
        for key in container.allKeys where !allowed.contains(key.stringValue) {
            throw UnknownMember(path: JSONRequest.path(codingPath + [key]))
        }
    }
}

import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import StoreGateCore

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

/// Request bodies, read within the size limit (``RequestJSONReader`` parses them).
enum JSONRequest {
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
            throw APIError(.badRequest, .bodyUnreadable, "the request body could not be read")
        }
    }
}

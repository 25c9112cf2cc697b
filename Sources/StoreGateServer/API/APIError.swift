import Foundation
public import HTTPTypes
public import Hummingbird
import StoreGateCore

/// An error reply: an HTTP status and a JSON body with a stable `code` and a `message`.
///
/// Every failure the service answers goes through this type, so every error body has the
/// same shape (`ErrorReply` in the OpenAPI document):
///
/// ```json
/// {"code": "signature_invalid", "message": "the RSA signature does not verify over the receipt",
///  "step": "signature", "field": "SignerInfo.signature"}
/// ```
///
/// `code` is stable and meant for programs; `message` is for people and may change. Neither
/// ever holds a proof, a secret, a stack trace or a file path.
public struct APIError: Error, HTTPResponseError, Sendable, CustomStringConvertible {
    /// The HTTP status.
    public let status: HTTPResponse.Status
    /// The stable, snake-case code.
    public let code: APIErrorCode
    /// A human-readable explanation.
    public let message: String
    /// The JSON member or proof field at fault, when there is one.
    public var field: String?
    /// The verification step that failed, for proofs.
    public var step: String?
    /// For `insufficient_balance`: the units available.
    public var available: Int?
    /// Whether the same request may succeed later (a busy database).
    public var isRetryable: Bool?
    /// Extra response headers (`Allow`, `WWW-Authenticate`, `Retry-After`).
    public var headers: HTTPFields = [:]

    /// Creates an error reply.
    public init(_ status: HTTPResponse.Status, _ code: APIErrorCode, _ message: String, field: String? = nil, step: String? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.step = step
    }

    public var description: String { "\(status.code) \(code): \(message)" }

    /// The JSON reply.
    public func response(from request: Request, context: some RequestContext) throws -> Response {
        response()
    }

    /// The JSON reply.
    public func response() -> Response {
        var response = JSONReply.response(Body(self), status: status)
        for field in headers {
            response.headers.append(field)
        }
        return response
    }

    /// The wire form (`ErrorReply`).
    struct Body: JSONWritable {
        let code: String
        let message: String
        let field: String?
        let step: String?
        let available: Int?
        let retryable: Bool?

        init(_ error: APIError) {
            code = error.code.rawValue
            message = error.message
            field = error.field
            step = error.step
            available = error.available
            retryable = error.isRetryable
        }

        func write(to json: inout JSONWriter) {
            json.object { json in
                json.member("code", code)
                json.member("message", message)
                json.member("field", field)
                json.member("step", step)
                json.member("available", available)
                json.member("retryable", retryable)
            }
        }
    }
}

extension APIError {
    /// 401: no key, or an unknown key.
    static func unauthorized(_ message: String) -> APIError {
        var error = APIError(.unauthorized, .unauthorized, message)
        error.headers[.wwwAuthenticate] = "Bearer realm=\"storegate\""
        return error
    }

    /// 403: a known key without the permission.
    static func forbidden(_ permission: Permission) -> APIError {
        APIError(.forbidden, .forbidden, "this API key may not call this endpoint (it lacks the \(permission.rawValue) permission)")
    }

    /// 413: the body is over the limit.
    static func bodyTooLarge(_ limit: Int) -> APIError {
        APIError(.contentTooLarge, .bodyTooLarge, "the request body is larger than \(limit) bytes")
    }

    /// 400 about one JSON member.
    static func badField(_ field: String, _ code: APIErrorCode, _ message: String) -> APIError {
        APIError(.badRequest, code, message, field: field)
    }

    /// 404 for an unknown path.
    static let notFound = APIError(.notFound, .notFound, "no such endpoint")

    /// 500 without details (they are logged, never answered).
    static let internalError = APIError(.internalServerError, .internalError, "the service failed to answer; the failure was logged")
}

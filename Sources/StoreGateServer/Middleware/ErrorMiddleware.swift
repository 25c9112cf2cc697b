import Hummingbird
import Logging
import NIOCore
import Foundation
import StoreGateConsole

/// Turns every failure into the service's JSON error shape: an ``APIError`` becomes its reply,
/// Hummingbird's own errors (404 and the like) get a `code` and a `message`, an oversized body
/// gets 413, a known path with an unknown method gets 405 with `Allow`, and anything else gets
/// a bare 500 whose details go to the log, never the reply.
struct ErrorMiddleware<Context: RequestContext>: RouterMiddleware {
    let bodyLimit: Int
    let routes: RouteTable

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch let error as APIError {
            return error.response()
        } catch let error as ConsoleError {
            return APIError(console: error, logger: context.logger).response()
        } catch is NIOTooManyBytesError {
            return APIError.bodyTooLarge(bodyLimit).response()
        } catch let error as HTTPError {
            switch error.status {
            case .notFound:
                if let allowed = routes.allowedMethods(forPath: request.uri.path) {
                    let allow = allowed.map(\.rawValue).joined(separator: ", ")
                    var reply = APIError(.methodNotAllowed, .methodNotAllowed, "this endpoint accepts \(allow)")
                    reply.headers[.allow] = allow
                    return reply.response()
                }
                return APIError.notFound.response()
            case .contentTooLarge: return APIError.bodyTooLarge(bodyLimit).response()
            case .badRequest: return APIError(error.status, .badRequest, error.body ?? error.status.reasonPhrase).response()
            case .requestTimeout: return APIError(error.status, .requestTimeout, error.body ?? error.status.reasonPhrase).response()
            default: return APIError(error.status, .httpError, error.body ?? error.status.reasonPhrase).response()
            }
        } catch {
            context.logger.error("request failed", metadata: ["error.type": "\(String(reflecting: type(of: error)))", "route": "\(context.endpointPath ?? "-")"])
            return APIError.internalError.response()
        }
    }
}

import Foundation
import HTTPTypes
import Logging
public import Hummingbird
import NIOCore

/// Lets a signed-in console user through; sends anyone else to the sign-in page (a `GET`) or
/// refuses them (anything else).
public struct ConsoleAuthMiddleware<Context: ConsoleRequestContext>: RouterMiddleware {
    let security: ConsoleSecurity

    /// Passes a request with a live session on (its context carrying the session), with the
    /// page's own time in `Server-Timing`.
    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let session = await security.session(request) else {
            if request.method == .get || request.method == .head {
                let target = request.uri.path + (request.uri.query.map { "?\($0)" } ?? "")
                let query = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "/-._~"))) ?? "/console"
                return Console.redirect("/console/signin?next=\(query)")
            }
            var headers: HTTPFields = [.contentType: "text/plain; charset=utf-8"]
            ConsoleSecurity.pageHeaders(&headers)
            return Response(status: .forbidden, headers: headers, body: .init(byteBuffer: ByteBuffer(string: "Sign in to the console first.\n")))
        }
        var context = context
        context.consoleSession = session
        context.logger[metadataKey: "api_key"] = .string(session.keyName)
        // The page's own time on the server (reads, verification, rendering), for people and
        // for `storegate-dev bench console`.
        let start = ContinuousClock.now
        var response = try await next(request, context)
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        response.headers[ConsoleSecurity.serverTiming] = "app;dur=\(String(format: "%.2f", milliseconds))"
        return response
    }
}

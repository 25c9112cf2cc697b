import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdAuth
import NIOCore
import StoreGateCore

/// The console's sessions and the checks every console request passes.
///
/// - Sign-in takes an API key with the `console` permission; the session lives in the
///   instance's memory (hummingbird-auth's session storage over Hummingbird's memory persist
///   driver), keyed by a 256-bit random id in an `HttpOnly`, `SameSite=Strict` cookie scoped to
///   `/console`, `Secure` when configured or behind a TLS terminator (`X-Forwarded-Proto: https`),
///   and expiring after the configured lifetime.
/// - Every form carries the session's CSRF token (the sign-in form a cookie-bound one), compared
///   in constant time; a post whose `Origin` or `Sec-Fetch-Site` says another site is refused
///   before that.
/// - Every console response is sent with a strict Content-Security-Policy (no inline script or
///   style, no framing, forms to the console only) and `nosniff`, by Hummingbird's
///   `ContentSecurityMiddleware` (``Console/securityHeaders(for:)``); every page also with
///   `no-store` (``pageHeaders(_:)``).
struct ConsoleSecurity: Sendable {
    static let sessionCookie = "storegate_console"
    static let signInCookie = "storegate_console_signin"
    static let path = "/console"
    /// `default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'none';
    /// form-action 'self'; frame-ancestors 'none'; base-uri 'none'` (Hummingbird's
    /// `ContentSecurityMiddleware` sends it with `nosniff`, ``Console/securityHeaders(for:)``).
    static let contentSecurityPolicy: ContentSecurityPolicy = [
        .defaultSrc(.none), .scriptSrc(.self), .styleSrc(.self), .imgSrc(.self), .connectSrc(.none),
        .formAction(.self), .frameAncestors(.none), .baseURI(.none),
    ]

    let storage: SessionStorage<ConsoleSession>
    let model: any ConsoleReadModel
    let lifetime: Duration
    let alwaysSecure: Bool

    init(persist: any PersistDriver, model: any ConsoleReadModel, lifetime: Duration, alwaysSecure: Bool) {
        self.storage = SessionStorage(persist, configuration: .init(
            sessionCookieParameters: .init(name: Self.sessionCookie, path: Self.path, secure: alwaysSecure, sameSite: .strict),
            keyPrefix: "console."
        ))
        self.model = model
        self.lifetime = lifetime
        self.alwaysSecure = alwaysSecure
    }

    /// A fresh 256-bit token, base64url.
    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
        return StoreGateCore.Base64.encode(bytes, url: true)
    }

    /// Whether cookies set for this request are `Secure`.
    func isSecure(_ request: Request) -> Bool {
        alwaysSecure || request.headers[Self.forwardedProto]?.lowercased() == "https"
    }

    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!
    static let secFetchSite = HTTPField.Name("Sec-Fetch-Site")!
    static let serverTiming = HTTPField.Name("Server-Timing")!

    func cookie(_ name: String, value: String, maxAge: Int, for request: Request) -> Cookie {
        Cookie(name: name, value: value, maxAge: maxAge, path: Self.path, secure: isSecure(request), httpOnly: true, sameSite: .strict)
    }

    /// The session the request's cookie names, if it exists, has not expired, and its key still
    /// has the console permission.
    func session(_ request: Request) async -> ConsoleSession? {
        guard let session = try? await storage.load(request: request) else { return nil }
        guard model.permissions(ofKeyNamed: session.keyName).contains(.signIn) else { return nil }
        return session
    }

    /// Starts a session for the key named `keyName`: the cookie to set.
    func signIn(keyName: String, request: Request) async throws -> Cookie {
        let session = ConsoleSession(keyName: keyName, csrf: Self.randomToken(), signedInAt: Date())
        let stored = try await storage.save(session: session, expiresIn: lifetime)
        return cookie(Self.sessionCookie, value: stored.value, maxAge: Int(lifetime.components.seconds), for: request)
    }

    /// Ends the request's session: the cookie that clears it.
    func signOut(_ request: Request) async -> Cookie {
        _ = try? await storage.delete(request: request)
        return cookie(Self.sessionCookie, value: "", maxAge: 0, for: request)
    }

    /// Refuses a state-changing request another site sent: the browser's `Sec-Fetch-Site` when
    /// it sends one (only `same-origin` and `none`, a typed address, pass); otherwise an `Origin`
    /// whose host is not the request's own (or `null`, an opaque origin such as a sandboxed
    /// frame's).
    static func isCrossSite(_ request: Request) -> Bool {
        if let site = request.headers[secFetchSite]?.lowercased() {
            return site != "same-origin" && site != "none"
        }
        if let origin = request.headers[.origin] {
            guard origin != "null", let host = URLComponents(string: origin)?.host else { return true }
            let authority = request.head.authority ?? ""
            let requestHost = authority.split(separator: ":").first.map(String.init) ?? authority
            return host.lowercased() != requestHost.lowercased()
        }
        return false
    }

    /// Constant-time comparison of a posted token with the expected one.
    static func tokensMatch(_ posted: String?, _ expected: String) -> Bool {
        guard let posted, !expected.isEmpty else { return false }
        let a = Array(posted.utf8), b = Array(expected.utf8)
        guard a.count == b.count else { return false }
        return zip(a, b).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// The headers every console page carries besides ``contentSecurityPolicy`` and `nosniff`
    /// (which ``Console/securityHeaders(for:)`` adds to every console response).
    static func pageHeaders(_ headers: inout HTTPFields) {
        headers[.cacheControl] = "no-store"
        // `same-origin`, not `no-referrer`: under `no-referrer` browsers send `Origin: null` with
        // the console's own form posts; other sites still get no referrer.
        headers[HTTPField.Name("Referrer-Policy")!] = "same-origin"
        headers[HTTPField.Name("X-Frame-Options")!] = "DENY"
        headers[HTTPField.Name("Cross-Origin-Opener-Policy")!] = "same-origin"
    }
}

/// A form body (`application/x-www-form-urlencoded`), read within a limit.
struct ConsoleForm: Sendable {
    private(set) var fields: [String: String] = [:]

    static let limit = 1 << 20

    init(_ request: Request, limit: Int = ConsoleForm.limit) async throws(ConsoleError) {
        let buffer: ByteBuffer
        do {
            buffer = try await request.body.collect(upTo: limit)
        } catch {
            throw ConsoleError(.formTooLarge, status: .contentTooLarge, reason: "a console form holds at most \(limit) bytes")
        }
        self.init(String(buffer: buffer))
    }

    init(_ text: String) {
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String? {
                String(part).replacingOccurrences(of: "+", with: " ").removingPercentEncoding
            }
            guard let name = decode(parts[0]), let value = parts.count > 1 ? decode(parts[1]) : "" else { continue }
            if fields[name] == nil { fields[name] = value }
        }
    }

    subscript(_ name: String) -> String? { fields[name] }
}

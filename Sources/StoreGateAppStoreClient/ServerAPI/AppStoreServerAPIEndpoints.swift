public import StoreGateCore

/// Where the App Store Server API lives, per environment.
///
/// ``apple`` holds the domains Apple recommends since 2026-05-05 (`api.storekit.apple.com`,
/// `api.storekit-sandbox.apple.com`); ``appleLegacy`` the older `…itunes.apple.com` ones,
/// which Apple still serves and an operator may still choose. A base URL is the scheme and
/// host (and optional path prefix) that every endpoint path (`/inApps/v1/…`) is appended to.
public struct AppStoreServerAPIEndpoints: Sendable, Hashable {
    /// The production base URL.
    public var production: String
    /// The sandbox base URL.
    public var sandbox: String

    /// Creates a value from its parts (trailing slashes are removed).
    public init(production: String, sandbox: String) {
        self.production = Self.trimmed(production)
        self.sandbox = Self.trimmed(sandbox)
    }

    /// Apple's recommended domains: `https://api.storekit.apple.com` and
    /// `https://api.storekit-sandbox.apple.com` (Apple's own libraries use them).
    public static let apple = AppStoreServerAPIEndpoints(
        production: "https://api.storekit.apple.com",
        sandbox: "https://api.storekit-sandbox.apple.com"
    )

    /// The domains Apple recommended before 2026-05-05, still served:
    /// `https://api.storekit.itunes.apple.com` and `https://api.storekit-sandbox.itunes.apple.com`.
    public static let appleLegacy = AppStoreServerAPIEndpoints(
        production: "https://api.storekit.itunes.apple.com",
        sandbox: "https://api.storekit-sandbox.itunes.apple.com"
    )

    /// A stand-in at `base` (StoreGate's test stand-in, `storegate-dev stand-in`): production at
    /// `base/production`, sandbox at `base/sandbox`.
    public init(standIn base: String) {
        let trimmed = Self.trimmed(base)
        self.init(production: trimmed + "/production", sandbox: trimmed + "/sandbox")
    }

    /// The base URL of `environment`: production or sandbox, nothing else.
    public func baseURL(for environment: AppStoreEnvironment) -> String? {
        switch environment {
        case .production: return production
        case .sandbox: return sandbox
        default: return nil
        }
    }

    /// The same endpoints with `environment`'s base URL replaced (production or sandbox; any
    /// other environment leaves them as they are).
    public func replacing(_ environment: AppStoreEnvironment, with baseURL: String) -> AppStoreServerAPIEndpoints {
        var copy = self
        switch environment {
        case .production: copy.production = Self.trimmed(baseURL)
        case .sandbox: copy.sandbox = Self.trimmed(baseURL)
        default: break
        }
        return copy
    }

    /// Why `url` cannot be a base URL, or `nil` when it can: `https://` with a host, or plain
    /// `http://` to this machine only (`127.0.0.1`, `localhost`, `[::1]`: a stand-in), with
    /// no query, fragment or credentials. Apple's answers are verified to Apple's root
    /// whichever base URL is used; the rule keeps bearer tokens off the network in clear text.
    public static func problem(withBaseURL url: String) -> String? {
        let lower = url.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            rest = lower.dropFirst("https://".count)
        } else if lower.hasPrefix("http://") {
            rest = lower.dropFirst("http://".count)
            let host = rest.prefix { $0 != "/" }
            let name = host.hasPrefix("[") ? String(host.prefix { $0 != "]" }) + "]" : String(host.prefix { $0 != ":" })
            guard ["127.0.0.1", "localhost", "[::1]"].contains(name) else {
                return "'\(url)' is not an https URL (plain http only to this machine, for a stand-in)"
            }
        } else {
            return "'\(url)' is not an https URL (plain http only to this machine, for a stand-in)"
        }
        let host = rest.prefix { $0 != "/" }
        guard !host.isEmpty, !host.hasPrefix(":") else { return "'\(url)' names no host" }
        guard !rest.contains("?"), !rest.contains("#"), !host.contains("@") else {
            return "'\(url)' carries a query, fragment or credentials; a base URL is scheme, host and an optional path"
        }
        guard rest.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else { return "'\(url)' holds spaces or characters outside ASCII" }
        return nil
    }

    private static func trimmed(_ url: String) -> String {
        var url = Substring(url)
        while url.hasSuffix("/") { url = url.dropLast() }
        return String(url)
    }
}

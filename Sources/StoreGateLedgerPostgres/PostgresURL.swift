import Foundation
public import PostgresNIO
public import StoreGateLedger

/// Reads `postgres://` connection URLs into PostgresNIO client configurations.
public enum PostgresURL {
    /// The client configuration for `url`:
    /// `postgres[ql]://user[:password]@host[:port]/database[?sslmode=disable|prefer|require]`.
    ///
    /// `sslmode` defaults to `prefer`; `require` (and `verify-ca`/`verify-full`) insist on TLS
    /// with certificate verification. User and password are percent-decoded.
    ///
    /// - Throws: ``LedgerError/Code/invalidConfiguration`` for anything else.
    public static func clientConfiguration(_ url: String) throws(LedgerError) -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url),
              let scheme = components.scheme, scheme == "postgres" || scheme == "postgresql"
        else {
            throw LedgerError(.invalidConfiguration, reason: "a PostgreSQL URL starts with postgres://")
        }
        guard let host = components.host, !host.isEmpty else {
            throw LedgerError(.invalidConfiguration, reason: "the PostgreSQL URL names no host")
        }
        guard let user = components.percentEncodedUser?.removingPercentEncoding, !user.isEmpty else {
            throw LedgerError(.invalidConfiguration, reason: "the PostgreSQL URL names no user")
        }
        let password = components.percentEncodedPassword?.removingPercentEncoding
        let database = String(components.path.drop { $0 == "/" })
        guard !database.isEmpty else {
            throw LedgerError(.invalidConfiguration, reason: "the PostgreSQL URL names no database")
        }
        let mode = components.queryItems?.first { $0.name == "sslmode" }?.value ?? "prefer"
        let tls: PostgresClient.Configuration.TLS
        switch mode {
        case "disable": tls = .disable
        case "prefer", "allow": tls = .prefer(.makeClientConfiguration())
        case "require", "verify-ca", "verify-full": tls = .require(.makeClientConfiguration())
        default: throw LedgerError(.invalidConfiguration, reason: "unknown sslmode '\(mode)' (disable, prefer, require)")
        }
        return PostgresClient.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: password, database: database, tls: tls
        )
    }
}

import Foundation

/// Where a ledger is: a SQLite file (`sqlite:PATH`) or a PostgreSQL database (`postgres://…`).
///
/// ``description`` never shows a password: a PostgreSQL URL's is replaced by `***`, so every
/// message can name the location.
public enum LedgerLocation: Sendable, Hashable, CustomStringConvertible {
    /// A SQLite ledger file.
    case sqlite(path: String)
    /// A PostgreSQL database, by its connection URL (password included, never printed).
    case postgres(url: String)

    /// Reads `sqlite:PATH` (also `sqlite://PATH`, an absolute path after the two slashes) or a
    /// `postgres://` / `postgresql://` URL with a host, a user and a database.
    ///
    /// - Throws: ``LedgerMigrationError/Code/invalidLocation`` for anything else.
    public init(parsing text: String) throws(LedgerMigrationError) {
        if text.hasPrefix("sqlite:") {
            var path = String(text.dropFirst("sqlite:".count))
            if path.hasPrefix("//") { path = String(path.dropFirst(2)) }
            guard !path.isEmpty, !path.contains("\u{0}") else {
                throw LedgerMigrationError(.invalidLocation, reason: "sqlite: takes the ledger file's path (sqlite:/var/lib/storegate/ledger.sqlite)")
            }
            self = .sqlite(path: path)
            return
        }
        guard text.hasPrefix("postgres://") || text.hasPrefix("postgresql://") else {
            throw LedgerMigrationError(
                .invalidLocation, reason: "'\(Self.masked(text))' is neither sqlite:PATH nor a postgres:// URL"
            )
        }
        guard let components = URLComponents(string: text), let host = components.host, !host.isEmpty,
              let user = components.user, !user.isEmpty, components.path.count > 1
        else {
            throw LedgerMigrationError(
                .invalidLocation, reason: "\(Self.masked(text)) is not postgres://user[:password]@host[:port]/database[?sslmode=…]"
            )
        }
        self = .postgres(url: text)
    }

    public var description: String {
        switch self {
        case .sqlite(let path): "sqlite:\(path)"
        case .postgres(let url): Self.masked(url)
        }
    }

    /// `text` with the password of a URL's user information replaced by `***`: everything
    /// between the first `:` after `://` and the last `@` before the host.
    static func masked(_ text: String) -> String {
        guard let scheme = text.range(of: "://") else { return text }
        let rest = text[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        guard let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") else { return text }
        return String(text[..<rest.index(after: colon)]) + "***" + String(text[at...])
    }
}

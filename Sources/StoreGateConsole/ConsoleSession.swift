public import Foundation

/// A signed-in console user: the name of the API key they signed in with (never the key) and
/// the session's CSRF token, which every form posts back.
public struct ConsoleSession: Codable, Sendable {
    /// The name of the API key the session was started with.
    public var keyName: String
    /// The token every form of the session posts back.
    public var csrf: String
    /// When the user signed in.
    public var signedInAt: Date
}

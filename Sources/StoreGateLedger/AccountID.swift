/// The developer's identifier of a customer account: who owns what the ledger records.
///
/// Any non-empty string of at most ``maximumLength`` UTF-8 bytes without control characters.
/// It is compared exactly (case-sensitive). How an account relates to the `appAccountToken`
/// an app sets on a purchase is decided by ``AppAccountTokenPolicy``.
public struct AccountID: RawRepresentable, Hashable, Sendable, Codable, Comparable, CustomStringConvertible {
    /// The longest accepted account id, in UTF-8 bytes.
    public static let maximumLength = 256

    public let rawValue: String

    /// Validates an account id.
    ///
    /// - Throws: ``LedgerError/Code/invalidAccount`` when the id is empty, longer than
    ///   ``maximumLength`` bytes or contains control characters.
    public init(_ rawValue: String) throws(LedgerError) {
        let length = rawValue.utf8.count
        guard length > 0, length <= Self.maximumLength else {
            throw LedgerError(.invalidAccount, reason: "an account id has 1...\(Self.maximumLength) UTF-8 bytes, got \(length)")
        }
        // Printable ASCII (the usual case) is checked byte by byte; anything else by Unicode category.
        let isPrintableASCII = rawValue.utf8.allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        guard isPrintableASCII || !rawValue.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw LedgerError(.invalidAccount, reason: "an account id may not contain control characters")
        }
        self.rawValue = rawValue
    }

    /// Validates an account id; `nil` when it is not acceptable (see ``init(_:)``).
    public init?(rawValue: String) {
        do { try self.init(rawValue) } catch { return nil }
    }

    /// Reads an id the ledger stored itself; it was validated when it was written.
    package init(stored rawValue: String) {
        self.rawValue = rawValue
    }

    public var description: String { rawValue }

    public static func < (lhs: AccountID, rhs: AccountID) -> Bool { lhs.rawValue < rhs.rawValue }

    public init(from decoder: any Decoder) throws {
        let value = try decoder.singleValueContainer().decode(String.self)
        try self.init(value)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }
}

public import Foundation
import StoreGateCore

/// One of Apple's enumerations (`offerType`, `notificationType`, …), carried by its raw value.
///
/// Apple adds values over the years; a value StoreGate does not know is kept as it came, never
/// dropped and never fatal. Every conforming type is a struct with static constants for the
/// documented values, like ``StoreGateCore/AppStoreEnvironment``.
public protocol AppleEnumeration: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible
where RawValue: Hashable & Sendable & Codable & CustomStringConvertible {}

extension AppleEnumeration {
    /// Reads the raw value; an unknown value is kept.
    public init(from decoder: any Decoder) throws {
        let raw = try decoder.singleValueContainer().decode(RawValue.self)
        guard let value = Self(rawValue: raw) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unreadable value"))
        }
        self = value
    }

    /// Writes Apple's JSON: the same member names, dates as milliseconds since 1970, absent members omitted.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(rawValue)
    }

    /// The raw value as text.
    public var description: String { rawValue.description }
}

extension AppStoreEnvironment: AppleEnumeration {}
extension ProductType: AppleEnumeration {}

// MARK: - Reading members into models

extension JSONValue {
    /// A string enumeration; unknown strings are kept.
    func enumeration<T: AppleEnumeration>(_ field: String, as type: T.Type = T.self) throws(SignedDataError) -> T?
    where T.RawValue == String {
        guard let raw = try string(field) else { return nil }
        return T(rawValue: raw)
    }

    /// An integer enumeration; unknown integers are kept.
    func enumeration<T: AppleEnumeration>(_ field: String, as type: T.Type = T.self) throws(SignedDataError) -> T?
    where T.RawValue == Int {
        guard let raw = try int(field) else { return nil }
        return T(rawValue: raw)
    }
}

// MARK: - Writing models as Apple's JSON

/// A coding key made from any string, so models write Apple's member names without a
/// `CodingKeys` enumeration each.
struct MemberKey: CodingKey, ExpressibleByStringLiteral {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
    init(stringLiteral value: String) { self.stringValue = value }
}

extension KeyedEncodingContainer where Key == MemberKey {
    /// Writes a date the way Apple does: milliseconds since 1970 (fractions kept to the microsecond).
    mutating func encodeMilliseconds(_ date: Date?, forKey key: MemberKey) throws {
        guard let date else { return }
        try encode(AppleDate.milliseconds(date), forKey: key)
    }
}

/// Apple's timestamps: milliseconds since 1970.
public enum AppleDate {
    /// The milliseconds since 1970 of `date`, rounded to the microsecond so integral values
    /// written by Apple come back integral.
    public static func milliseconds(_ date: Date) -> Double {
        (date.timeIntervalSince1970 * 1_000_000).rounded() / 1000
    }
}

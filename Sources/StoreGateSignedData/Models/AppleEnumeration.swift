public import Foundation
import StoreGateCore

/// One of Apple's enumerations (`offerType`, `notificationType`, …), carried by its raw value.
///
/// Apple adds values over the years; a value StoreGate does not know is kept as it came, never
/// dropped and never fatal. Every conforming type is a struct with static constants for the
/// documented values, like `AppStoreEnvironment`.
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
    /// Writes the members a model kept without modelling them, after its own, as they came
    /// (an integer stays an integer, an object keeps its members' order).
    mutating func encodeUnknown(_ members: JSONObject) throws {
        for member in members.members {
            try encode(member.value, forKey: MemberKey(stringValue: member.key))
        }
    }

    /// Writes a date the way Apple does: milliseconds since 1970 (fractions kept to the microsecond).
    mutating func encodeMilliseconds(_ date: Date?, forKey key: MemberKey) throws {
        guard let date else { return }
        try encode(AppleDate.milliseconds(date), forKey: key)
    }
}

/// Apple's timestamps: milliseconds since 1970.
public enum AppleDate {
    /// The milliseconds since 1970 of `date`, always a value that reads back as this very
    /// `date`, so that a model written, read and written again gives the same JSON: whole
    /// milliseconds when they read back so (Apple's own dates), else the microsecond (Xcode's
    /// fractions of today), else the nearest value that reads back exactly.
    ///
    /// A `Date` is a `Double` of seconds since 2001: it holds every microsecond only for dates
    /// near today (from about 2033 a fraction read loses its last digit, and the microsecond
    /// would read back as a neighbouring date), and every whole millisecond only up to year
    /// ±140,000. A fraction is written only where the readers take one
    /// (`fractionsReadBelow`).
    public static func milliseconds(_ date: Date) -> Double {
        // The whole millisecond nearest `date` that reads back as it (Core's search, for the
        // dates beyond year ±140,000 where a Date holds no more than every other millisecond).
        let whole = Double(CivilTime.AppleDate(date).milliseconds)
        if reads(whole, as: date) { return whole }
        let exact = date.timeIntervalSince1970 * 1000
        if let found = [(exact * 1000).rounded() / 1000, exact].first(where: { reads($0, as: date) }) {
            return found
        }
        // The doubles that read back as `date` are an interval around `exact`, a few steps away
        // at most.
        var up = exact
        var down = exact
        for _ in 0..<16 {
            up = up.nextUp
            if reads(up, as: date) { return up }
            down = down.nextDown
            if reads(down, as: date) { return down }
        }
        return whole
    }

    /// The date of Apple's `milliseconds` since 1970: the one conversion the payload readers use.
    public static func date(milliseconds: Double) -> Date {
        Date(timeIntervalSince1970: milliseconds / 1000)
    }

    /// 2^53 microseconds, in milliseconds (year 2255): the readers refuse a fractional
    /// timestamp at or beyond, where no Apple data has one.
    static let fractionsReadBelow = 9_007_199_254_740.992

    /// Whether the readers take `milliseconds` (a fraction only below `fractionsReadBelow`)
    /// and read it as `date`.
    private static func reads(_ milliseconds: Double, as date: Date) -> Bool {
        (milliseconds.rounded() == milliseconds || milliseconds.magnitude < fractionsReadBelow)
            && Self.date(milliseconds: milliseconds) == date
    }
}

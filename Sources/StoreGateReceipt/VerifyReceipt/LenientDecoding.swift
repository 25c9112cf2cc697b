package import Foundation
import StoreGateCore

/// verifyReceipt replies spell the same field as a string in one reply and a number in
/// another (`"quantity": "1"` and `"quantity": 1`; ids and `_ms` dates likewise; booleans as
/// `"true"`, `"1"` or `true`). These readers accept each documented spelling and nothing else:
/// a value of another shape is an error, never silently dropped. Each `try?` below probes one
/// JSON type; when no probe fits, the reader throws.
extension KeyedDecodingContainer {
    /// A string, or an integer written as its decimal digits.
    package func lenientString(_ key: Key) throws -> String? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let string = try? decode(String.self, forKey: key) { return string }
        if let integer = try? decode(Int64.self, forKey: key) { return String(integer) }
        if let integer = try? decode(UInt64.self, forKey: key) { return String(integer) }
        throw DecodingError.typeMismatch(String.self, .init(codingPath: codingPath + [key], debugDescription: "expected a string or an integer"))
    }

    /// An integer, or a string holding one.
    package func lenientInt(_ key: Key) throws -> Int? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let integer = try? decode(Int.self, forKey: key) { return integer }
        if let string = try? decode(String.self, forKey: key) {
            if let integer = Int(string.trimmingCharacters(in: .whitespaces)) { return integer }
        }
        throw DecodingError.typeMismatch(Int.self, .init(codingPath: codingPath + [key], debugDescription: "expected an integer"))
    }

    /// A boolean: `true`/`false`, `"true"`/`"false"`, `1`/`0` or `"1"`/`"0"`.
    package func lenientBool(_ key: Key) throws -> Bool? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let bool = try? decode(Bool.self, forKey: key) { return bool }
        if let integer = try? decode(Int.self, forKey: key), integer == 0 || integer == 1 { return integer == 1 }
        if let string = try? decode(String.self, forKey: key) {
            switch string.lowercased() {
            case "true", "1": return true
            case "false", "0": return false
            default: break
            }
        }
        throw DecodingError.typeMismatch(Bool.self, .init(codingPath: codingPath + [key], debugDescription: "expected a boolean"))
    }

    /// A time in UNIX milliseconds, as an integer or a string of digits (Xcode writes fractions).
    package func lenientMillis(_ key: Key) throws -> Date? {
        guard contains(key), try !decodeNil(forKey: key) else { return nil }
        if let integer = try? decode(Int64.self, forKey: key) { return try date(milliseconds: Double(integer), key) }
        if let number = try? decode(Double.self, forKey: key), number.isFinite { return try date(milliseconds: number, key) }
        if let string = try? decode(String.self, forKey: key) {
            if string.isEmpty { return nil }
            // Digits and a point, after an optional minus: a date before 1970 is written so.
            let unsigned = string.utf8.first == UInt8(ascii: "-") ? string.utf8.dropFirst() : string.utf8[...]
            if !unsigned.isEmpty, unsigned.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x2E }), let number = Double(string), number.isFinite {
                return try date(milliseconds: number, key)
            }
        }
        throw DecodingError.typeMismatch(Date.self, .init(codingPath: codingPath + [key], debugDescription: "expected UNIX milliseconds"))
    }

    /// A date from UNIX milliseconds within ±8.64 × 10^15 (±100,000,000 days, the range of an
    /// ECMAScript date): wider than any date Apple writes, and narrow enough that every date
    /// read can be written back as whole milliseconds in an `Int64`. A fraction (Xcode's) is
    /// rounded to the whole millisecond here, once, as Apple's spellings write it, so the
    /// date read is the date of the milliseconds written back (``CivilTime/AppleDate``).
    private func date(milliseconds: Double, _ key: Key) throws -> Date {
        guard abs(milliseconds) <= 8.64e15 else {
            throw DecodingError.dataCorrupted(.init(codingPath: codingPath + [key], debugDescription: "a time beyond ±8.64e15 UNIX milliseconds"))
        }
        return CivilTime.AppleDate(milliseconds: Int64(milliseconds.rounded())).date
    }

    /// A date from `<name>_ms`, or from `<name>` when that holds milliseconds (iOS 6-style
    /// receipts write `expires_date` that way).
    package func lenientDate(ms msKey: Key, plain plainKey: Key) throws -> Date? {
        if let date = try lenientMillis(msKey) { return date }
        guard contains(plainKey), try !decodeNil(forKey: plainKey) else { return nil }
        if let integer = try? decode(Int64.self, forKey: plainKey) { return try date(milliseconds: Double(integer), plainKey) }
        if let string = try? decode(String.self, forKey: plainKey), !string.isEmpty,
           string.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), let integer = Int64(string) {
            return try date(milliseconds: Double(integer), plainKey)
        }
        // "2020-11-08 16:00:57 Etc/GMT": the `_ms` twin is authoritative; without one, no date.
        return nil
    }
}

/// Coding keys built from any string, for reading Apple's snake-case names.
package struct AnyKey: CodingKey, Hashable {
    package let stringValue: String
    package var intValue: Int? { nil }
    package init(_ string: String) { self.stringValue = string }
    package init?(stringValue: String) { self.stringValue = stringValue }
    package init?(intValue: Int) { nil }
}

extension KeyedDecodingContainer where Key == AnyKey {
    package func lenientString(_ name: String) throws -> String? { try lenientString(AnyKey(name)) }
    package func lenientInt(_ name: String) throws -> Int? { try lenientInt(AnyKey(name)) }
    package func lenientBool(_ name: String) throws -> Bool? { try lenientBool(AnyKey(name)) }
    /// A date from `<name>_ms`, or from `<name>` when that holds milliseconds; `<name>_pst` is never read.
    package func lenientDate(_ name: String) throws -> Date? { try lenientDate(ms: AnyKey(name + "_ms"), plain: AnyKey(name)) }
}

import Foundation
import StoreGateCore

extension JSONReader {
    /// Reads `bytes` as a JSON object, naming a failure as `code` for `field`.
    static func readObject(
        _ bytes: [UInt8],
        code: SignedDataError.Code,
        field: String
    ) throws(SignedDataError) -> JSONObject {
        switch readObject(bytes) {
        case .success(let object):
            return object
        case .failure(let failure):
            let at = failure.path.isEmpty ? "" : " (\(failure.dottedPath))"
            throw SignedDataError(code, field: field, reason: "not a JSON object: \(failure.reason) at byte \(failure.offset)\(at)")
        }
    }
}

/// Typed access to a member's value, throwing a payload error that names the member.
///
/// JSON `null` reads as absent, like a missing member.
extension JSONValue {
    private func wrongType(_ field: String, expected: String) -> SignedDataError {
        SignedDataError(.invalidField, field: field, reason: "expected \(expected), found \(typeName)")
    }

    func string(_ field: String) throws(SignedDataError) -> String? {
        switch self {
        case .null: return nil
        case .string(let value): return value
        default: throw wrongType(field, expected: "a string")
        }
    }

    func bool(_ field: String) throws(SignedDataError) -> Bool? {
        switch self {
        case .null: return nil
        case .bool(let value): return value
        default: throw wrongType(field, expected: "a boolean")
        }
    }

    func int64(_ field: String) throws(SignedDataError) -> Int64? {
        switch self {
        case .null: return nil
        case .integer(let value): return value
        case .fraction: throw SignedDataError(.invalidField, field: field, reason: "expected an integer that fits 64 bits")
        default: throw wrongType(field, expected: "an integer")
        }
    }

    func int(_ field: String) throws(SignedDataError) -> Int? {
        guard let value = try int64(field) else { return nil }
        guard let narrow = Int(exactly: value) else {
            throw SignedDataError(.invalidField, field: field, reason: "integer out of range")
        }
        return narrow
    }

    /// Apple's timestamps: milliseconds since 1970, possibly fractional (Xcode) or negative
    /// (Xcode's year-1 `originalPurchaseDate`), within ±8.64 × 10^15 (±100,000,000 days, the
    /// range of an ECMAScript date) whether written as integers or not: far wider than any date
    /// Apple writes, and narrow enough that every date read is written back the same (the
    /// models' JSON, ``AppleDate/milliseconds(_:)``) and fits the ledger's `Int64` milliseconds.
    func date(_ field: String) throws(SignedDataError) -> Date? {
        let milliseconds: Double
        switch self {
        case .null: return nil
        case .integer(let value): milliseconds = Double(value)
        case .fraction(let value): milliseconds = value
        default: throw wrongType(field, expected: "milliseconds since 1970")
        }
        guard milliseconds.isFinite, abs(milliseconds) <= 8.64e15 else {
            throw SignedDataError(.invalidField, field: field, reason: "timestamp out of range")
        }
        // Apple's fractional timestamps (Xcode's) are dates of today; one beyond 2^53
        // microseconds (year 2255), where a Double holds no microsecond, is refused.
        if case .fraction = self, abs(milliseconds) >= AppleDate.fractionsReadBelow {
            throw SignedDataError(.invalidField, field: field, reason: "fractional timestamp out of range")
        }
        return AppleDate.date(milliseconds: milliseconds)
    }

    /// A UUID written as a string; an empty string reads as absent.
    func uuid(_ field: String) throws(SignedDataError) -> UUID? {
        guard let text = try string(field), !text.isEmpty else { return nil }
        guard let value = UUID(uuidString: text) else {
            throw SignedDataError(.invalidField, field: field, reason: "not a UUID")
        }
        return value
    }

    func stringArray(_ field: String) throws(SignedDataError) -> [String]? {
        switch self {
        case .null: return nil
        case .array(let elements):
            var strings: [String] = []
            strings.reserveCapacity(elements.count)
            for element in elements {
                guard case .string(let value) = element else {
                    throw SignedDataError(.invalidField, field: field, reason: "expected an array of strings")
                }
                strings.append(value)
            }
            return strings
        default: throw wrongType(field, expected: "an array of strings")
        }
    }

    func object(_ field: String) throws(SignedDataError) -> JSONObject? {
        switch self {
        case .null: return nil
        case .object(let value): return value
        default: throw wrongType(field, expected: "an object")
        }
    }
}

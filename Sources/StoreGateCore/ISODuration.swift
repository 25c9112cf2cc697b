public import Foundation

/// ISO 8601 durations without years or months (their length varies: use `until`), and RFC 3339 times.
public enum ISODuration {
    /// The seconds of `PnW`, or `PnDTnHnMnS` (any part may be left out, at least one given).
    ///
    /// - Parameter text: The duration.
    /// - Returns: Its seconds, or `nil` when it is not one.
    public static func seconds(_ text: String) -> Int64? {
        var rest = Substring(text.uppercased())
        guard rest.first == "P", rest.count > 1 else { return nil }
        rest = rest.dropFirst()
        var total: Int64 = 0
        var inTime = false
        var number = ""
        var sawPart = false
        for character in rest {
            if character.isASCII, character.isNumber {
                number.append(character)
                guard number.count <= 9 else { return nil }
                continue
            }
            if character == "T" {
                guard !inTime, number.isEmpty else { return nil }
                inTime = true
                continue
            }
            guard let value = Int64(number) else { return nil }
            number = ""
            sawPart = true
            switch (character, inTime) {
            case ("W", false): total += value * 604_800
            case ("D", false): total += value * 86_400
            case ("H", true): total += value * 3600
            case ("M", true): total += value * 60
            case ("S", true): total += value
            default: return nil
            }
        }
        guard number.isEmpty, sawPart, total > 0 else { return nil }
        return total
    }

    /// An RFC 3339 time (with or without fractional seconds).
    ///
    /// - Parameter text: The time.
    /// - Returns: The date, or `nil` when it is not one.
    public static func date(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: text) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: text)
    }
}

public import Foundation

/// Reads an HTTP `Retry-After` header.
///
/// The App Store Server API sends the UNIX time in milliseconds at which the next request is
/// allowed; RFC 9110 allows a number of seconds or an HTTP date. All three are understood: an
/// integer of 10^11 or more is UNIX milliseconds (10^11 seconds would be over 3,000 years), a
/// smaller one is seconds from `now`, anything else is tried as an IMF-fixdate.
public enum RetryAfter {
    /// The time the header names, or `nil` when it is absent or unreadable.
    public static func parse(_ value: String?, now: Date) -> Date? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard value.utf8.count <= 18, let number = Int64(value) else { return nil }
            if number >= 100_000_000_000 {
                return Date(timeIntervalSince1970: Double(number) / 1000)
            }
            return now.addingTimeInterval(Double(number))
        }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: value)
    }
}

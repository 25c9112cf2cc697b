import Foundation

/// Apple's verifyReceipt date strings, written without Foundation formatters:
/// `2020-07-22 17:39:08 Etc/GMT`, its `_ms` twin, and the `_pst` one in America/Los_Angeles.
public enum AppleDateFormat {
    /// Milliseconds since 1970 as a decimal string, as verifyReceipt writes `…_ms`.
    public static func milliseconds(_ date: Date) -> String {
        String(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public static func gmt(_ date: Date) -> String {
        format(seconds: Int64(date.timeIntervalSince1970.rounded(.down)), zone: "Etc/GMT")
    }

    private static let pacific = TimeZone(identifier: "America/Los_Angeles")

    /// `yyyy-MM-dd HH:mm:ss America/Los_Angeles` (falls back to a fixed -08:00 when the
    /// time zone database is unavailable).
    public static func pst(_ date: Date) -> String {
        let offset = pacific?.secondsFromGMT(for: date) ?? -8 * 3600
        return format(seconds: Int64(date.timeIntervalSince1970.rounded(.down)) + Int64(offset), zone: "America/Los_Angeles")
    }

    /// `yyyy-MM-ddTHH:mm:ssZ` (RFC 3339 in UTC).
    public static func rfc3339(_ date: Date) -> String {
        let text = format(seconds: Int64(date.timeIntervalSince1970.rounded(.down)), zone: "")
        return text.replacingOccurrences(of: " ", with: "T").trimmingCharacters(in: .whitespaces) + "Z"
    }

    private static func format(seconds: Int64, zone: String) -> String {
        var days = seconds / 86_400
        var remainder = seconds % 86_400
        if remainder < 0 {
            remainder += 86_400
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        func pad(_ value: Int64, _ width: Int) -> String {
            let text = String(value)
            return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
        }
        let time = "\(pad(remainder / 3600, 2)):\(pad(remainder % 3600 / 60, 2)):\(pad(remainder % 60, 2))"
        let base = "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2)) \(time)"
        return zone.isEmpty ? base : "\(base) \(zone)"
    }

    /// The civil date of a day count since 1970-01-01 (Howard Hinnant's algorithm).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let y = yoe + era * 400
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (m <= 2 ? y + 1 : y, m, d)
    }
}

public import Foundation

/// A UTC calendar day as days since 1970-01-01, with the conversions the analytics need
/// (civil dates by Howard Hinnant's algorithm: no calendar objects, no time zones).
public struct AnalyticsDay: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Days since 1970-01-01.
    public var number: Int64

    /// Wraps a day number.
    public init(_ number: Int64) {
        self.number = number
    }

    /// The UTC day of `date`.
    public init(_ date: Date) {
        number = FamilyRollup.day(date)
    }

    /// The day of a civil date.
    public init(year: Int64, month: Int64, day: Int64) {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        number = era * 146_097 + doe - 719_468
    }

    /// Parses `YYYY-MM-DD`; `nil` for anything else (or an impossible date).
    public init?(parsing text: some StringProtocol) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let year = Int64(parts[0]), let month = Int64(parts[1]), let day = Int64(parts[2]),
              (1...12).contains(month), (1...31).contains(day)
        else { return nil }
        self.init(year: year, month: month, day: day)
        guard civil == (year, month, day) else { return nil }
    }

    /// The civil date (year, month, day).
    public var civil: (year: Int64, month: Int64, day: Int64) {
        let z = number + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `YYYY-MM-DD`, the year in four digits (at least).
    public var description: String {
        let (year, month, day) = civil
        func padded(_ value: Int64, _ width: Int) -> String {
            let digits = String(value.magnitude)
            return (value < 0 ? "-" : "") + String(repeating: "0", count: max(0, width - digits.count)) + digits
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
    }

    /// Midnight UTC of the day.
    public var date: Date { Date(timeIntervalSince1970: Double(number) * 86_400) }

    /// The first day of the bucket of `interval` holding this day.
    public func bucketStart(_ interval: AnalyticsInterval) -> AnalyticsDay {
        switch interval {
        case .day: return self
        case .week:
            // 1970-01-01 was a Thursday: Monday-based weekday index = (number + 3) mod 7.
            let weekday = ((number + 3) % 7 + 7) % 7
            return AnalyticsDay(number - weekday)
        case .month:
            let (year, month, _) = civil
            return AnalyticsDay(year: year, month: month, day: 1)
        }
    }

    /// The first day of the next bucket of `interval`.
    public func nextBucket(_ interval: AnalyticsInterval) -> AnalyticsDay {
        let start = bucketStart(interval)
        switch interval {
        case .day: return AnalyticsDay(start.number + 1)
        case .week: return AnalyticsDay(start.number + 7)
        case .month:
            let (year, month, _) = start.civil
            return month == 12 ? AnalyticsDay(year: year + 1, month: 1, day: 1) : AnalyticsDay(year: year, month: month + 1, day: 1)
        }
    }

    public static func < (lhs: AnalyticsDay, rhs: AnalyticsDay) -> Bool { lhs.number < rhs.number }
}

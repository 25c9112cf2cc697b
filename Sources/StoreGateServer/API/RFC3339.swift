import Foundation

/// RFC 3339 timestamps in UTC with milliseconds (`2020-07-14T19:36:40.000Z`), written without
/// Foundation's formatters, which cost more than the rest of a reply.
enum RFC3339 {
    /// The timestamp of `date`, rounded down to the millisecond.
    static func string(_ date: Date) -> String {
        let totalMilliseconds = Int64((date.timeIntervalSince1970 * 1000).rounded(.down))
        let (days, dayMilliseconds) = floorDivision(totalMilliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let seconds = dayMilliseconds / 1000
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        func append(_ value: Int64, width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        if year < 0 || year > 9999 {
            // Outside RFC 3339's four-digit years; never produced by Apple's dates.
            return ISO8601DateFormatter().string(from: date)
        }
        append(year, width: 4)
        bytes.append(UInt8(ascii: "-"))
        append(month, width: 2)
        bytes.append(UInt8(ascii: "-"))
        append(day, width: 2)
        bytes.append(UInt8(ascii: "T"))
        append(seconds / 3600, width: 2)
        bytes.append(UInt8(ascii: ":"))
        append(seconds / 60 % 60, width: 2)
        bytes.append(UInt8(ascii: ":"))
        append(seconds % 60, width: 2)
        bytes.append(UInt8(ascii: "."))
        append(dayMilliseconds % 1000, width: 3)
        bytes.append(UInt8(ascii: "Z"))
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func floorDivision(_ value: Int64, _ divisor: Int64) -> (Int64, Int64) {
        var quotient = value / divisor
        var remainder = value % divisor
        if remainder < 0 {
            quotient -= 1
            remainder += divisor
        }
        return (quotient, remainder)
    }

    /// Howard Hinnant's `civil_from_days`: days since 1970-01-01 to (year, month, day).
    private static func civil(fromDays days: Int64) -> (Int64, Int64, Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}

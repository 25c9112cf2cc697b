public import Foundation

/// Calendar arithmetic for the timestamps proofs carry, without Foundation formatters (which
/// cost more than the rest of a verification): proleptic Gregorian dates from and to days
/// since 1970-01-01 (Howard Hinnant's algorithms), and the text forms StoreGate writes.
public enum CivilTime {
    /// A date broken into UTC (or offset) fields.
    public struct Fields: Hashable, Sendable {
        public var year: Int64
        public var month: Int64
        public var day: Int64
        public var hour: Int64
        public var minute: Int64
        public var second: Int64
        public var millisecond: Int64
    }

    /// Days since 1970-01-01 of a civil date.
    public static func days(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// The civil date of a day count since 1970-01-01.
    public static func civil(fromDays days: Int64) -> (year: Int64, month: Int64, day: Int64) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// The fields of `date` shifted by `offsetSeconds` east of UTC, rounded down to the millisecond.
    public static func fields(of date: Date, offsetSeconds: Int = 0) -> Fields {
        fields(milliseconds: Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) + Int64(offsetSeconds) * 1000)
    }

    /// The fields of a time in whole milliseconds since 1970.
    static func fields(milliseconds: Int64) -> Fields {
        var days = milliseconds / 86_400_000
        var remainder = milliseconds % 86_400_000
        if remainder < 0 {
            remainder += 86_400_000
            days -= 1
        }
        let (year, month, day) = civil(fromDays: days)
        let seconds = remainder / 1000
        return Fields(year: year, month: month, day: day, hour: seconds / 3600, minute: seconds / 60 % 60, second: seconds % 60, millisecond: remainder % 1000)
    }

    /// `2020-07-14T19:36:40Z`, or with `milliseconds` `2020-07-14T19:36:40.000Z`; with an
    /// offset, `2020-07-14T20:36:40+0100` (Xcode's form) or `+01:00` when `colon`.
    ///
    /// Written byte by byte: the service writes one per date in every reply.
    public static func rfc3339(_ date: Date, offsetSeconds: Int? = nil, milliseconds: Bool = false, colon: Bool = false) -> String {
        let f = fields(of: date, offsetSeconds: offsetSeconds ?? 0)
        var text = TextBytes(capacity: 29)
        text.date(f, separator: "T")
        if milliseconds {
            text.byte(".")
            text.digits(f.millisecond, 3)
        }
        guard let offset = offsetSeconds else {
            text.byte("Z")
            return text.string
        }
        let magnitude = Int64(abs(offset))
        text.byte(offset < 0 ? "-" : "+")
        text.digits(magnitude / 3600, 2)
        if colon { text.byte(":") }
        text.digits(magnitude % 3600 / 60, 2)
        return text.string
    }

    /// One date as verifyReceipt spells it: `x` (`2020-07-22 17:39:08 Etc/GMT`), `x_ms`
    /// (`1595439548000`) and `x_pst` (`2020-07-22 10:39:08 America/Los_Angeles`).
    ///
    /// The one rounding rule of Apple's spellings: the date is rounded to the nearest whole
    /// millisecond (a half away from zero) once, and all three spellings are made from that
    /// millisecond, so `x` never names another second than `x_ms` (a `.9995` fraction once
    /// rounded up in one and was cut down in the other). Apple's own dates are whole
    /// milliseconds, which every rule keeps as they are.
    public struct AppleDate: Hashable, Sendable {
        /// Milliseconds since 1970: what `x_ms` holds, and what `x` and `x_pst` spell.
        public let milliseconds: Int64

        /// `date` rounded to the nearest millisecond (clamped to what an `Int64` holds).
        ///
        /// A `Date` (a `Double` of seconds since 2001) holds every whole millisecond up to year
        /// ±140,000 or so; beyond, one date stands for two milliseconds or more, and the nearest
        /// one can read back as a neighbouring date. There the millisecond chosen is the nearest
        /// that reads back as `date` itself, so a date read from its own milliseconds is
        /// written with the same ones again.
        public init(_ date: Date) {
            let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
            guard let nearest = Int64(exactly: milliseconds) else {
                self.milliseconds = milliseconds < 0 ? .min : .max
                return
            }
            self.milliseconds = Self.readingBack(date, near: nearest)
        }

        /// `nearest`, or the nearest millisecond to it that reads back as `date`.
        private static func readingBack(_ date: Date, near nearest: Int64) -> Int64 {
            guard Self(milliseconds: nearest).date != date, nearest.magnitude < 1 << 62 else { return nearest }
            let offsets: [Int64] = [1, -1, 2, -2, 3, -3, 4, -4]
            return offsets.lazy.map { nearest + $0 }.first { Self(milliseconds: $0).date == date } ?? nearest
        }

        /// A time already in whole milliseconds since 1970.
        public init(milliseconds: Int64) {
            self.milliseconds = milliseconds
        }

        /// The date these spellings name.
        public var date: Date { Date(timeIntervalSince1970: Double(milliseconds) / 1000) }

        /// `x_ms`: `1595439548000`.
        public var millisecondsText: String { String(milliseconds) }

        /// `x`: `2020-07-22 17:39:08 Etc/GMT`.
        public var gmt: String { CivilTime.appleText(milliseconds: milliseconds, zone: "Etc/GMT") }

        /// `x_pst`: `2020-07-22 10:39:08 America/Los_Angeles` (daylight saving time included;
        /// a fixed -08:00 when the time zone database is unavailable).
        public var pst: String {
            let offset = AppleDate.pacific?.secondsFromGMT(for: date) ?? -8 * 3600
            return CivilTime.appleText(milliseconds: milliseconds, offsetSeconds: offset, zone: "America/Los_Angeles")
        }

        private static let pacific = TimeZone(identifier: "America/Los_Angeles")
    }

    /// `2020-07-22 17:39:08` followed by ` ` and `zone` (verifyReceipt's form) of a time in
    /// whole milliseconds since 1970, shifted by `offsetSeconds`.
    public static func appleText(milliseconds: Int64, offsetSeconds: Int = 0, zone: String) -> String {
        var text = TextBytes(capacity: 20 + zone.utf8.count)
        let (shifted, overflow) = milliseconds.addingReportingOverflow(Int64(offsetSeconds) * 1000)
        text.date(fields(milliseconds: overflow ? milliseconds : shifted), separator: " ")
        text.byte(" ")
        text.bytes.append(contentsOf: zone.utf8)
        return text.string
    }

    /// ASCII written into one buffer.
    private struct TextBytes {
        var bytes: [UInt8] = []

        init(capacity: Int) { bytes.reserveCapacity(capacity) }

        var string: String { String(decoding: bytes, as: UTF8.self) }

        mutating func byte(_ character: Unicode.Scalar) { bytes.append(UInt8(ascii: character)) }

        /// `value` in decimal, zero-padded to at least `width` digits; a minus sign first when negative.
        mutating func digits(_ value: Int64, _ width: Int) {
            if value < 0 { byte("-") }
            let magnitude = value.magnitude
            var divisor: UInt64 = 1
            var count = 1
            while count < width || magnitude / divisor >= 10 {
                divisor *= 10
                count += 1
            }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(magnitude / divisor % 10))
                divisor /= 10
            }
        }

        /// `YYYY-MM-DD` `separator` `hh:mm:ss`.
        mutating func date(_ f: Fields, separator: Unicode.Scalar) {
            digits(f.year, 4)
            byte("-")
            digits(f.month, 2)
            byte("-")
            digits(f.day, 2)
            byte(separator)
            digits(f.hour, 2)
            byte(":")
            digits(f.minute, 2)
            byte(":")
            digits(f.second, 2)
        }
    }
}

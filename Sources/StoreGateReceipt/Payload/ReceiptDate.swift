import Foundation
import StoreGateCore

/// Parses the RFC 3339 dates receipts carry, byte by byte (no Foundation formatter).
///
/// Forms seen in real receipts: `2015-05-23T12:18:09Z`, `2020-07-22T18:33:15+0100`
/// (Xcode's numeric offset), `4001-01-01T00:00:00+0000`. Also accepted: `+01:00` offsets
/// and fractional seconds. An empty string means "absent".
enum ReceiptDate {
    /// The date, or `nil` for the empty string; throws for anything malformed.
    static func parse(_ bytes: UnsafeBufferPointer<UInt8>) throws(TLVReader.Failure) -> Date? {
        if bytes.isEmpty { return nil }
        var cursor = 0
        let end = bytes.count

        func digits(_ count: Int) throws(TLVReader.Failure) -> Int {
            guard end - cursor >= count else { throw .truncated }
            var value = 0
            for _ in 0..<count {
                let byte = bytes[cursor]
                guard byte >= 0x30, byte <= 0x39 else { throw .badLength }
                value = value * 10 + Int(byte - 0x30)
                cursor += 1
            }
            return value
        }
        func expect(_ char: UInt8) throws(TLVReader.Failure) {
            guard cursor < end, bytes[cursor] == char else { throw .badLength }
            cursor += 1
        }

        let year = try digits(4)
        try expect(UInt8(ascii: "-"))
        let month = try digits(2)
        try expect(UInt8(ascii: "-"))
        let day = try digits(2)
        guard cursor < end, bytes[cursor] == UInt8(ascii: "T") || bytes[cursor] == UInt8(ascii: " ") else { throw .badLength }
        cursor += 1
        let hour = try digits(2)
        try expect(UInt8(ascii: ":"))
        let minute = try digits(2)
        try expect(UInt8(ascii: ":"))
        let second = try digits(2)
        var fraction = 0.0
        if cursor < end, bytes[cursor] == UInt8(ascii: ".") {
            cursor += 1
            var scale = 0.1
            var count = 0
            while cursor < end, bytes[cursor] >= 0x30, bytes[cursor] <= 0x39 {
                fraction += Double(bytes[cursor] - 0x30) * scale
                scale /= 10
                cursor += 1
                count += 1
            }
            guard count > 0 else { throw .badLength }
        }
        guard (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day),
              hour < 24, minute < 60, second < 61
        else { throw .badLength }

        var offset = 0
        guard cursor < end else { throw .truncated }  // a zone is required
        switch bytes[cursor] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            cursor += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = bytes[cursor] == UInt8(ascii: "-") ? -1 : 1
            cursor += 1
            let hours = try digits(2)
            if cursor < end, bytes[cursor] == UInt8(ascii: ":") { cursor += 1 }
            let minutes = try digits(2)
            guard hours < 24, minutes < 60 else { throw .badLength }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            throw .badLength
        }
        guard cursor == end else { throw .badLength }

        let days = CivilTime.days(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset
        return Date(timeIntervalSince1970: Double(seconds) + fraction)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}

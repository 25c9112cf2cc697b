public import Foundation
import StoreGateCore

/// Apple's verifyReceipt date strings: `2020-07-22 17:39:08 Etc/GMT`, its `_ms` twin, and
/// the `_pst` one in America/Los_Angeles.
public enum AppleDateFormat {
    /// Milliseconds since 1970 as a decimal string, as verifyReceipt writes `…_ms`.
    public static func milliseconds(_ date: Date) -> String {
        String(Int64((date.timeIntervalSince1970 * 1000).rounded(.down)))
    }

    /// `yyyy-MM-dd HH:mm:ss Etc/GMT`.
    public static func gmt(_ date: Date) -> String {
        CivilTime.appleText(date, zone: "Etc/GMT")
    }

    private static let pacific = TimeZone(identifier: "America/Los_Angeles")

    /// `yyyy-MM-dd HH:mm:ss America/Los_Angeles` (a fixed -08:00 when the time zone database
    /// is unavailable).
    public static func pst(_ date: Date) -> String {
        CivilTime.appleText(date, offsetSeconds: pacific?.secondsFromGMT(for: date) ?? -8 * 3600, zone: "America/Los_Angeles")
    }
}

import Foundation
import StoreGateCore
import StoreGateReceipt
import Testing

/// verifyReceipt's three spellings of a date (`x`, `x_ms`, `x_pst`) come from one whole
/// millisecond, rounded to the nearest, wherever they are written.
@Suite("Apple's date spellings")
struct AppleDateTests {
    /// 2023-11-14T08:19:59Z, then fractions around the rounding points.
    static let base = 1_699_949_999.0
    static let fractions: [Double] = [0, 0.0004, 0.0005, 0.0006, 0.4, 0.9994, 0.9995, 0.9996, 0.99999]

    /// The seconds since 1970 a `yyyy-MM-dd HH:mm:ss zone` text names, read as UTC.
    static func seconds(_ text: String) throws -> Int64 {
        let parts = text.split(whereSeparator: { "- :".contains($0) }).prefix(6).map { Int($0) }
        guard parts.count == 6, let year = parts[0], let month = parts[1], let day = parts[2],
              let hour = parts[3], let minute = parts[4], let second = parts[5] else {
            throw Failure(text)
        }
        return Int64(CivilTime.days(year: year, month: month, day: day)) * 86_400 + Int64(hour * 3600 + minute * 60 + second)
    }

    /// Whole seconds of a millisecond count, rounded down (also before 1970).
    static func floorSeconds(_ milliseconds: Int64) -> Int64 {
        milliseconds >= 0 ? milliseconds / 1000 : -((-milliseconds + 999) / 1000)
    }

    @Test("x, x_ms and x_pst name the same second, whatever the fraction", arguments: fractions)
    func sameSecond(_ fraction: Double) throws {
        for sign in [1.0, -1.0] {
            let date = CivilTime.AppleDate(Date(timeIntervalSince1970: sign * (Self.base + fraction)))
            let second = Self.floorSeconds(date.milliseconds)
            #expect(try Self.seconds(date.gmt) == second, "\(date.gmt) against \(date.millisecondsText)")
            #expect(date.gmt.hasSuffix(" Etc/GMT"))
            let pacific = try Self.seconds(date.pst)
            #expect([-8 * 3600, -7 * 3600].contains(pacific - second), "\(date.pst) against \(date.millisecondsText)")
            #expect(date.pst.hasSuffix(" America/Los_Angeles"))
            #expect(date.millisecondsText == String(date.milliseconds))
        }
    }

    @Test("the millisecond is rounded to the nearest, a half away from zero",
          arguments: [(1_699_949_999.9996, 1_699_950_000_000 as Int64), (1_699_949_999.9994, 1_699_949_999_999),
                      (1_699_949_999.0004, 1_699_949_999_000), (-0.0006, -1), (-0.0004, 0), (0.0015, 2)])
    func nearest(_ seconds: Double, _ milliseconds: Int64) {
        #expect(CivilTime.AppleDate(Date(timeIntervalSince1970: seconds)).milliseconds == milliseconds)
    }

    @Test("a .9995 fraction gives the same second in x, x_ms and x_pst (all the next one)")
    func nineNineNineFive() {
        // As a verifyReceipt reply's `1699949999999.5` milliseconds is read (fuzz-verifyreceipt-reply).
        let date = CivilTime.AppleDate(Date(timeIntervalSince1970: 1_699_949_999_999.5 / 1000))
        #expect(date.millisecondsText == "1699950000000")
        #expect(date.gmt == "2023-11-14 08:20:00 Etc/GMT")
        #expect(date.pst == "2023-11-14 00:20:00 America/Los_Angeles")
    }

    @Test("a receipt's verifyReceipt JSON spells each date from one millisecond", arguments: fractions)
    func receiptDates(_ fraction: Double) throws {
        let date = Date(timeIntervalSince1970: Self.base + fraction)
        let purchase = InAppPurchase(quantity: 1, productId: "p", transactionId: "1", purchaseDate: date, cancellationDate: date)
        let receipt = AppReceipt(
            receiptType: "ProductionSandbox", bundleId: "com.example.app", bundleIdData: [], appVersion: "1",
            opaqueValue: [], sha1Hash: [], creationDate: date, inAppPurchases: [purchase])
        let json = try JSONReader.readObject(JSONWriter.encode(VerifyReceiptReceipt(receipt, requestDate: date))).get()
        guard case .array(let entries) = try #require(json["in_app"]), case .object(let entry) = try #require(entries.first) else {
            throw Failure("in_app")
        }
        let expected = CivilTime.AppleDate(date)
        for (object, name) in [(json, "receipt_creation_date"), (json, "request_date"), (entry, "purchase_date"), (entry, "cancellation_date")] {
            #expect(object[name] == .string(expected.gmt), "\(name)")
            #expect(object[name + "_ms"] == .string(expected.millisecondsText), "\(name)_ms")
            #expect(object[name + "_pst"] == .string(expected.pst), "\(name)_pst")
            #expect(try Self.seconds(expected.gmt) == Self.floorSeconds(expected.milliseconds))
        }
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ text: String) { description = "not an Apple date text: \(text)" }
    }
}

import Testing

@testable import StoreGateLedger

@Suite("Analytics days: YYYY-MM-DD both ways")
struct AnalyticsDayTests {
    @Test("a day is written with a four-digit year and read back to the same day", arguments: ["0003-01-03", "0999-12-31", "1969-12-07", "1970-01-01", "2024-02-29", "9999-12-31"])
    func roundTrip(text: String) throws {
        let day = try #require(AnalyticsDay(parsing: text))
        #expect(day.description == text)
        #expect(AnalyticsDay(parsing: day.description) == day)
    }

    @Test("a text that is not a date is not a day", arguments: ["3-01-03", "2026-1-03", "2026-02-30", "2025-02-29", "2026-13-01", "20260101", "2026-01-01T00:00:00Z", ""])
    func refuses(text: String) {
        #expect(AnalyticsDay(parsing: text) == nil)
    }
}

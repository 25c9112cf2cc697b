public import Foundation

/// Exchange rates a team provides (`STOREGATE_FX_RATES_FILE`) for totals in one reporting
/// currency. Amounts stay in their own currency everywhere else.
///
/// The file is JSON: the reporting currency, and per currency its rates by date — how many
/// units of the reporting currency one unit is worth from that date on:
///
/// ```json
/// { "reportingCurrency": "USD",
///   "rates": { "EUR": { "2026-01-01": 1.08, "2026-02-01": 1.09 }, "JPY": { "2026-01-01": 0.0068 } } }
/// ```
///
/// A day's amount is converted at the latest rate dated on or before it; a day before a
/// currency's first rate has no rate, and totals say so (``AnalyticsSeries/missingRates``)
/// rather than guess.
public struct ExchangeRates: Sendable, Hashable {
    /// The currency totals are converted to.
    public var reportingCurrency: String
    /// Per currency, its rates sorted by day.
    public var rates: [String: [(day: AnalyticsDay, rate: Double)]]

    public static func == (lhs: ExchangeRates, rhs: ExchangeRates) -> Bool {
        lhs.reportingCurrency == rhs.reportingCurrency && lhs.rates.keys.sorted() == rhs.rates.keys.sorted()
            && lhs.rates.allSatisfy { key, value in
                let other = rhs.rates[key] ?? []
                return value.count == other.count && zip(value, other).allSatisfy { $0.day == $1.day && $0.rate == $1.rate }
            }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(reportingCurrency)
        for key in rates.keys.sorted() {
            hasher.combine(key)
            for entry in rates[key] ?? [] {
                hasher.combine(entry.day)
                hasher.combine(entry.rate)
            }
        }
    }

    /// Creates rates.
    public init(reportingCurrency: String, rates: [String: [(day: AnalyticsDay, rate: Double)]]) {
        self.reportingCurrency = reportingCurrency
        self.rates = rates.mapValues { $0.sorted { $0.day < $1.day } }
    }

    private struct File: Decodable {
        var reportingCurrency: String
        var rates: [String: [String: Double]]
    }

    /// Reads the JSON file's bytes.
    ///
    /// - Throws: ``LedgerError/Code/invalidConfiguration`` naming what is wrong (not JSON, a
    ///   bad date, a rate that is not a positive number, a currency code that is not three
    ///   letters).
    public init(json: [UInt8]) throws(LedgerError) {
        let file: File
        do {
            file = try JSONDecoder().decode(File.self, from: Data(json))
        } catch {
            throw LedgerError(.invalidConfiguration, reason: "the exchange rates file is not the documented JSON")
        }
        func checkCurrency(_ code: String) throws(LedgerError) {
            guard code.utf8.count == 3, code.utf8.allSatisfy({ (65...90).contains($0) }) else {
                throw LedgerError(.invalidConfiguration, reason: "'\(code.prefix(10))' is not an ISO 4217 currency code")
            }
        }
        try checkCurrency(file.reportingCurrency)
        var rates: [String: [(day: AnalyticsDay, rate: Double)]] = [:]
        for (currency, dated) in file.rates {
            try checkCurrency(currency)
            for (text, rate) in dated {
                guard let day = AnalyticsDay(parsing: text) else {
                    throw LedgerError(.invalidConfiguration, reason: "'\(text.prefix(20))' (\(currency)) is not a YYYY-MM-DD date")
                }
                guard rate.isFinite, rate > 0 else {
                    throw LedgerError(.invalidConfiguration, reason: "the \(currency) rate of \(text) is not a positive number")
                }
                rates[currency, default: []].append((day, rate))
            }
        }
        self.init(reportingCurrency: file.reportingCurrency, rates: rates)
    }

    /// The rate of `currency` on `day` and the date it is from; the reporting currency is 1;
    /// `nil` when no rate is dated on or before the day.
    public func rate(of currency: String, on day: AnalyticsDay) -> (day: AnalyticsDay, rate: Double)? {
        if currency == reportingCurrency { return (day, 1) }
        guard let dated = rates[currency] else { return nil }
        var low = 0, high = dated.count
        while low < high {
            let middle = (low + high) / 2
            if dated[middle].day <= day { low = middle + 1 } else { high = middle }
        }
        return low == 0 ? nil : dated[low - 1]
    }
}

import Foundation
import Hummingbird
import NIOCore
import StoreGateCore
import StoreGateLedger

/// The reply of `GET /v1/analytics/{metric}` (`AnalyticsSeries` in `openapi.yaml`).
struct AnalyticsReply: JSONWritable {
    let series: AnalyticsSeries

    func write(to json: inout JSONWriter) {
        let query = series.query
        json.object { json in
            json.member("metric", query.metric.rawValue)
            json.member("kind", query.metric.kind.rawValue)
            json.member("interval", query.interval.rawValue)
            json.member("from", query.from.description)
            json.member("to", query.to.description)
            json.nullableMember("groupBy", query.groupBy?.rawValue)
            json.member("environment", query.environment.rawValue)
            json.key("points")
            json.array(series.points) { json, point in
                json.object { json in
                    json.member("start", point.start.description)
                    json.member("end", point.end.description)
                    if query.groupBy != nil { json.member("group", point.group ?? "") }
                    json.member("currency", point.currency)
                    json.key("value")
                    if let value = point.value { json.number(value) } else { json.null() }
                    json.member("count", point.count)
                    json.member("amountMilliunits", point.amount)
                    json.member("denominator", point.denominator)
                    if point.isConverted { json.member("converted", true) }
                }
            }
            json.member("unpricedTransactions", series.unpricedTransactions)
            json.member("reportingCurrency", series.reportingCurrency)
            if series.reportingCurrency != nil {
                json.key("ratesUsed")
                json.array(series.ratesUsed) { json, rate in
                    json.object { json in
                        json.member("currency", rate.currency)
                        json.member("date", rate.day.description)
                        json.key("rate")
                        json.number(rate.rate)
                    }
                }
                json.member("missingRates", series.missingRates)
            }
        }
    }

    /// The series as CSV (RFC 4180): one row per point, a header first.
    var csv: String {
        var lines = ["start,end,group,currency,value,count,amount_milliunits,denominator,converted"]
        for point in series.points {
            let fields: [String] = [
                point.start.description, point.end.description, point.group ?? "", point.currency ?? "",
                point.value.map { String($0) } ?? "", point.count.map(String.init) ?? "", point.amount.map(String.init) ?? "",
                point.denominator.map(String.init) ?? "", point.isConverted ? "true" : "false",
            ]
            lines.append(fields.map(Self.csvField).joined(separator: ","))
        }
        return lines.joined(separator: "\r\n") + "\r\n"
    }

    /// A CSV field, quoted when it holds a comma, a quote or a line break; a leading `=`, `+`,
    /// `-` or `@` of text is prefixed with `'` so spreadsheets do not run it as a formula.
    static func csvField(_ text: String) -> String {
        var text = text
        if let first = text.first, "=+@".contains(first) || (first == "-" && Double(text) == nil) { text = "'" + text }
        guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return text }
        return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

extension Endpoints {
    /// The days a series covers when `from` is not given.
    static let defaultAnalyticsDays: Int64 = 30

    /// `GET /v1/analytics/{metric}?from=&to=&interval=&groupBy=&environment=`: one metric per
    /// day, week or month (UTC) from the ledger's daily rollups, optionally grouped; JSON, or
    /// CSV with `Accept: text/csv`. docs/analytics.md defines every metric.
    @Sendable func readAnalytics(_ request: Request, context: StoreGateRequestContext) async throws -> Response {
        let name = try Self.pathParameter("metric", context)
        guard let metric = AnalyticsMetric(rawValue: name) else {
            throw APIError(.notFound, .unknownMetric, "no metric '\(name.prefix(64))'; see docs/analytics.md", field: "metric")
        }
        let parameters = request.uri.queryParameters
        let today = AnalyticsDay(now())
        let to = try Self.dayQuery(parameters["to"].map(String.init), name: "to") ?? today
        let from = try Self.dayQuery(parameters["from"].map(String.init), name: "from") ?? AnalyticsDay(to.number - Self.defaultAnalyticsDays + 1)
        let interval = try Self.enumQuery(parameters["interval"].map(String.init), name: "interval", AnalyticsInterval.self) ?? .day
        let groupBy = try Self.enumQuery(parameters["groupBy"].map(String.init), name: "groupBy", AnalyticsGrouping.self)
        let environment = try parameters["environment"].map { text throws(APIError) in
            let known: [AppStoreEnvironment] = [.production, .sandbox, .xcode, .localTesting, .test]
            let environment = AppStoreEnvironment(rawValue: String(text))
            guard known.contains(environment) else {
                throw APIError(.badRequest, .invalidQueryParameter, "'environment' is one of \(known.map(\.rawValue).joined(separator: ", "))", field: "environment")
            }
            return environment
        } ?? .production
        let query: AnalyticsQuery
        do throws(LedgerError) {
            query = try AnalyticsQuery(metric: metric, from: from, to: to, interval: interval, groupBy: groupBy, environment: environment)
        } catch {
            throw APIError(.badRequest, .invalidQueryParameter, error.reason, field: "from")
        }
        let series: AnalyticsSeries
        do throws(LedgerError) {
            series = try await ledger.series(query, today: today, commission: configuration.commission, exchangeRates: configuration.exchangeRates)
        } catch {
            throw APIError.ledger(error, logger: context.logger)
        }
        let reply = AnalyticsReply(series: series)
        if Self.acceptsCSV(request) {
            return Response(
                status: .ok, headers: [.contentType: "text/csv; charset=utf-8"],
                body: .init(byteBuffer: ByteBuffer(string: reply.csv))
            )
        }
        return JSONReply.response(reply)
    }

    /// Whether the request asks for CSV (`Accept: text/csv`).
    static func acceptsCSV(_ request: Request) -> Bool {
        guard let accept = request.headers[.accept] else { return false }
        return accept.split(separator: ",").contains { $0.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() == "text/csv" }
    }

    /// A `YYYY-MM-DD` query parameter, from 1970 on (no App Store purchase is older, and a range
    /// reaching back before year 1 could not be written as a date).
    static func dayQuery(_ text: String?, name: String) throws(APIError) -> AnalyticsDay? {
        guard let text else { return nil }
        guard let day = AnalyticsDay(parsing: text), day.number >= 0 else {
            throw APIError(.badRequest, .invalidQueryParameter, "'\(name)' is a date, YYYY-MM-DD, from 1970-01-01 on", field: name)
        }
        return day
    }

    /// A query parameter naming one case of `type`.
    static func enumQuery<T: RawRepresentable & CaseIterable>(_ text: String?, name: String, _ type: T.Type) throws(APIError) -> T? where T.RawValue == String {
        guard let text else { return nil }
        guard let value = T(rawValue: text) else {
            throw APIError(.badRequest, .invalidQueryParameter, "'\(name)' is one of \(T.allCases.map(\.rawValue).joined(separator: ", "))", field: name)
        }
        return value
    }
}

extension Endpoints {
    /// The money and subscriber metrics.
    var analyticsRoutes: [Route] {
        [Route(.get, "/v1/analytics/:metric", .apiKey(.analyticsRead), readAnalytics)]
    }
}

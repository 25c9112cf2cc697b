import Foundation
import HTTPTypes
import HummingbirdTesting
import NIOCore
import StoreGateCore
import Testing

import StoreGateLedger
import StoreGateTestSupport
@testable import StoreGateServer

/// Issue 29 item 6: the Overview's money and subscriber charts (server-rendered SVG with a
/// table of values), their controls (a plain GET form), and the drill-down from a point to the
/// transactions behind it.
@Suite("The console's money and subscriber charts")
struct ConsoleChartTests {
    /// 2026-01-05T12:00:00Z plus `days`.
    static func at(_ days: Double) -> Date { Date(timeIntervalSince1970: 1_767_614_400 + days * 86_400) }

    static func period(
        _ id: String, original: String? = nil, price: Int64, currency: String, storefront: String, start: Double, days: Double,
        trial: Bool = false, reason: String = "PURCHASE", revoked: Double? = nil
    ) -> VerifiedProof {
        let transaction = VerifiedTransaction(
            environment: .production, bundleId: TestData.bundleId, transactionId: id, originalTransactionId: original ?? id,
            productId: TestData.monthly, productType: .autoRenewable, quantity: 1, purchaseDate: at(start), originalPurchaseDate: at(start),
            expiresDate: at(start + days), revocationDate: revoked.map(at), revocationReason: revoked == nil ? nil : 0, webOrderLineItemId: nil,
            subscriptionGroupIdentifier: "pro", appAccountToken: nil, isUpgraded: false, signedDate: at(revoked ?? start), source: .signedTransaction,
            money: MoneyFacts(
                price: price, currency: currency, storefront: storefront, offerType: trial ? MoneyFacts.introductoryOffer : nil,
                offerDiscountType: trial ? "FREE_TRIAL" : nil, transactionReason: reason
            )
        )
        return VerifiedProof(
            kind: .signedTransaction, environment: .production, bundleId: TestData.bundleId, signedDate: at(revoked ?? start),
            transactions: [transaction], rawProof: Array(id.utf8)
        )
    }

    /// January 2026: alice's trial converts on the 12th (USD 9.99); bob pays EUR 10.99 on the
    /// 7th; carol pays USD 9.99 on the 8th and is refunded on the 10th.
    static func seeded() async throws -> StoreGateApplication {
        let (app, ledger) = TestData.application(try TestData.configuration())
        try await ledger.record(period("a-t", price: 0, currency: "USD", storefront: "USA", start: 0, days: 7, trial: true), for: try AccountID("alice"))
        try await ledger.record(period("a-p", original: "a-t", price: 9990, currency: "USD", storefront: "USA", start: 7, days: 30, reason: "RENEWAL"), for: try AccountID("alice"))
        try await ledger.record(period("b-1", price: 10_990, currency: "EUR", storefront: "DEU", start: 2, days: 30), for: try AccountID("bob"))
        try await ledger.record(period("c-1", price: 9990, currency: "USD", storefront: "USA", start: 3, days: 30), for: try AccountID("carol"))
        try await ledger.record(period("c-1", price: 9990, currency: "USD", storefront: "USA", start: 3, days: 30, revoked: 5), for: try AccountID("carol"))
        return app
    }

    static func get(_ client: some TestClientProtocol, _ browser: ConsoleTests.Browser, _ uri: String) async throws -> TestResponse {
        try await client.execute(uri: uri, method: .get, headers: browser.headers, body: nil)
    }

    /// The section of the page holding chart `id`.
    static func card(_ html: String, _ id: String) -> String {
        guard let start = html.range(of: "id=\"\(id)\"") else { return "" }
        return String(html[start.lowerBound...]).components(separatedBy: "</section>").first ?? ""
    }

    static let january = "/console?from=2026-01-01&to=2026-01-31&interval=month&environment=Production"

    @Test("the overview charts every metric as labelled SVG with the story's values, each bar linking to its transactions")
    func charts() async throws {
        let app = try await Self.seeded()
        try await app.testRouter { client in
            let browser = try #require(try await ConsoleTests.signIn(client).1)
            let response = try await Self.get(client, browser, Self.january)
            #expect(response.status == .ok)
            let html = response.text
            // Active subscriptions, MRR ×2 currencies, new trials, conversions, new paid, churned, refunds, gross revenue ×2.
            #expect(html.components(separatedBy: "<svg class=\"metric-chart\"").count - 1 == 10)
            #expect(html.components(separatedBy: "<svg class=\"chart").count - 1 == 4, "the activity charts stay")
            let expected: [(String, String, String)] = [
                ("chart-active_subscriptions", "2 at the end of 2026-01-31", "2026-01 · 2"),
                ("chart-mrr-USD", "USD 9.99 at the end of 2026-01-31", "2026-01 · 9.99"),
                ("chart-mrr-EUR", "EUR 10.99 at the end of 2026-01-31", "2026-01 · 10.99"),
                ("chart-new_trials", "1 in the range", "2026-01 · 1"),
                ("chart-trial_conversions", "1 in the range", "2026-01 · 1"),
                ("chart-new_paid_subscriptions", "3 in the range", "2026-01 · 3"),
                ("chart-churned", "1 in the range", "2026-01 · 1"),
                ("chart-refunds", "1 in the range", "2026-01 · 1"),
                ("chart-gross_revenue-USD", "USD 19.98 in the range", "2026-01 · 19.98"),
                ("chart-gross_revenue-EUR", "EUR 10.99 in the range", "2026-01 · 10.99"),
            ]
            for (id, headline, bar) in expected {
                let card = Self.card(html, id)
                #expect(card.contains("<p class=\"figure\">\(headline)</p>"), "\(id): \(headline)")
                #expect(card.contains("<title>\(bar)</title></rect>"), "\(id): a bar titled \(bar)")
                #expect(card.contains("<title id=\"\(id)-title\">") && card.contains("<desc id=\"\(id)-desc\">"), "\(id): title and desc")
                #expect(card.contains("class=\"axis-title x\"") && card.contains("month (UTC)"), "\(id): axis labels")
                #expect(card.contains("<table>"), "\(id): a table of the values")
            }
            #expect(html.contains("href=\"/console/analytics/active_subscriptions?from=2026-01-01&amp;to=2026-01-31&amp;environment=Production\""))
            #expect(html.contains("href=\"/console/analytics/gross_revenue?from=2026-01-01&amp;to=2026-01-31&amp;environment=Production&amp;currency=USD\""))
            // No inline script or style on the page (the CSP forbids both).
            #expect(!html.contains("<script>") && !html.contains("style="))
            #expect(response.headers[.contentSecurityPolicy]?.contains("script-src 'self'") == true)
        }
    }

    @Test("the GET form's controls change the query: interval, group, range, environment")
    func controls() async throws {
        let app = try await Self.seeded()
        try await app.testRouter { client in
            let browser = try #require(try await ConsoleTests.signIn(client).1)
            let daily = try await Self.get(client, browser, "/console?from=2026-01-01&to=2026-01-31&interval=day&environment=Production").text
            #expect(daily.contains("<option value=\"day\" selected>"))
            #expect(Self.card(daily, "chart-active_subscriptions").components(separatedBy: "<th scope=\"row\">").count - 1 == 31)
            #expect(daily.contains("href=\"/console/analytics/refunds?from=2026-01-10&amp;to=2026-01-10&amp;environment=Production\""))
            #expect(daily.contains("value=\"2026-01-01\"") && daily.contains("<option value=\"custom\" selected>"))

            let grouped = try await Self.get(client, browser, Self.january + "&groupBy=storefront").text
            #expect(grouped.contains("<option value=\"storefront\" selected>"))
            let active = Self.card(grouped, "chart-active_subscriptions")
            #expect(active.contains("<title>2026-01 · DEU: 1</title>") && active.contains("<title>2026-01 · USA: 1</title>"))
            #expect(active.contains("<ul class=\"legend\">"))
            #expect(active.contains("href=\"/console/analytics/active_subscriptions?from=2026-01-01&amp;to=2026-01-31&amp;environment=Production&amp;groupBy=storefront&amp;group=DEU\""))

            // A preset: the last 30 days up to today, per day.
            let preset = try await Self.get(client, browser, "/console?range=30d").text
            #expect(preset.contains("<option value=\"30d\" selected>") && preset.contains("per day"))
            #expect(Self.card(preset, "chart-active_subscriptions").components(separatedBy: "<th scope=\"row\">").count - 1 == 30)
            #expect(preset.contains("<option value=\"\" selected>fitting the range (day)</option>"))
            // Turning a custom view's select to a preset leaves its old dates behind.
            let left = try await Self.get(client, browser, "/console?was=custom&range=12m&from=2026-01-01&to=2026-01-31&interval=").text
            #expect(left.contains("<option value=\"12m\" selected>") && !left.contains("value=\"2026-01-01\"") && left.contains("per month"))
            // Typing dates on a preset view makes the range custom.
            let typed = try await Self.get(client, browser, "/console?was=90d&range=90d&from=2026-01-01&to=2026-01-31&interval=month&environment=Production").text
            #expect(typed.contains("<option value=\"custom\" selected>") && typed.contains("2 at the end of 2026-01-31"))
            // Another environment holds none of the story.
            let sandbox = try await Self.get(client, browser, "/console?from=2026-01-01&to=2026-01-31&interval=month&environment=Sandbox").text
            #expect(Self.card(sandbox, "chart-active_subscriptions").contains("0 at the end of 2026-01-31"))
            #expect(!sandbox.contains("chart-mrr-USD"))
        }
    }

    @Test("a point's drill-down lists exactly the transactions behind it, each linking to its account and transaction")
    func drillDown() async throws {
        let app = try await Self.seeded()
        try await app.testRouter { client in
            let browser = try #require(try await ConsoleTests.signIn(client).1)
            func ids(_ uri: String) async throws -> [String] {
                let response = try await Self.get(client, browser, uri)
                #expect(response.status == .ok, "\(uri)")
                let pattern = #/href="/console/transactions/Production/([^"]+)"/#
                return response.text.matches(of: pattern).map { String($0.output.1) }
            }
            let revenue = try await Self.get(client, browser, "/console/analytics/gross_revenue?from=2026-01-01&to=2026-01-31&environment=Production&currency=USD")
            #expect(revenue.text.contains("USD 19.98"))
            #expect(revenue.text.contains("href=\"/console/accounts/alice\"") && revenue.text.contains("href=\"/console/accounts/carol\""))
            #expect(!revenue.text.contains("/console/accounts/bob"))
            #expect(try await ids("/console/analytics/gross_revenue?from=2026-01-01&to=2026-01-31&environment=Production&currency=USD") == ["c-1", "a-p"])
            #expect(try await ids("/console/analytics/gross_revenue?from=2026-01-01&to=2026-01-31&environment=Production&currency=EUR") == ["b-1"])
            #expect(try await ids("/console/analytics/refunds?from=2026-01-10&to=2026-01-10&environment=Production") == ["c-1"])
            #expect(try await ids("/console/analytics/refunds?from=2026-01-11&to=2026-01-31&environment=Production").isEmpty)
            #expect(try await ids("/console/analytics/active_subscriptions?from=2026-01-01&to=2026-01-31&environment=Production") == ["b-1", "a-p"])
            #expect(try await ids("/console/analytics/active_subscriptions?from=2026-01-01&to=2026-01-31&environment=Production&groupBy=storefront&group=DEU") == ["b-1"])
            #expect(try await ids("/console/analytics/trial_conversions?from=2026-01-01&to=2026-01-31&environment=Production") == ["a-t"])
            #expect(try await ids("/console/analytics/new_paid_subscriptions?from=2026-01-01&to=2026-01-31&environment=Production") == ["b-1", "c-1", "a-p"])
            #expect(try await ids("/console/analytics/churned?from=2026-01-01&to=2026-01-31&environment=Production") == ["c-1"])
            #expect(try await ids("/console/analytics/gross_revenue?from=2026-01-01&to=2026-01-31&environment=Sandbox").isEmpty)
            // Every transaction link opens the transaction's page.
            let page = try await Self.get(client, browser, "/console/transactions/Production/a-p")
            #expect(page.status == .ok && page.text.contains("href=\"/console/accounts/alice\""))
        }
    }

    static let refused: [(String, HTTPResponse.Status)] = [
        ("/console?from=2026-13-01", .badRequest),
        ("/console?to=0003-02-01", .badRequest),
        ("/console?interval=year", .badRequest),
        ("/console?groupBy=account", .badRequest),
        ("/console?environment=Staging", .badRequest),
        ("/console?range=7y", .badRequest),
        ("/console?from=2026-02-01&to=2026-01-01", .badRequest),
        ("/console?from=1990-01-01&to=2026-01-01&interval=day", .badRequest),
        ("/console/analytics/arpu?from=2026-01-01&to=2026-01-31", .notFound),
        ("/console/analytics/mrr", .badRequest),
        ("/console/analytics/mrr?from=2026-01-01", .badRequest),
        ("/console/analytics/mrr?from=2026-01-01&to=2026-01-31&group=USA", .badRequest),
        ("/console/analytics/mrr?from=2026-01-01&to=2026-01-31&groupBy=offer", .badRequest),
        ("/console/analytics/mrr?from=1950-01-01&to=2026-01-31", .badRequest),
        ("/console/analytics/mrr?from=1971-01-01&to=2026-01-31", .badRequest),
        ("/console/analytics/mrr?from=2026-01-31&to=2026-01-01", .badRequest),
        ("/console/analytics/refunds?from=2026-01-01&to=2026-01-31&environment=Xcode", .badRequest),
    ]

    @Test("a bad parameter is refused with the console's error page, never a 500", arguments: refused)
    func refusal(uri: String, status: HTTPResponse.Status) async throws {
        let (app, _) = TestData.application(try TestData.configuration())
        try await app.testRouter { client in
            let browser = try #require(try await ConsoleTests.signIn(client).1)
            let response = try await Self.get(client, browser, uri)
            #expect(response.status == status, "\(uri)")
            #expect(response.text.contains("class=\"alert bad\" role=\"alert\""), "\(uri): the console's error page")
            #expect(response.headers[.contentSecurityPolicy] != nil)
            // Without a session, the drill-down sends the browser to sign in.
            let anonymous = try await client.execute(uri: uri, method: .get, headers: [:], body: nil)
            #expect(anonymous.status == .seeOther)
        }
    }
}

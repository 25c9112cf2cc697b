import Foundation
import PropertyBased
import StoreGateCore
import Testing

@testable import StoreGateLedger

extension LedgerTests {
    /// ``EntitlementCalculator/nextChange(after:records:)`` bounds the span over which holdings
    /// derived at one instant hold (the SQLite account cache reuses them within it): at every
    /// instant of the span the calculation gives the same holdings but for their date, and a
    /// span never ends later than the first instant whose answer differs.
    @Suite("Entitlements: the span over which derived holdings hold")
    struct EntitlementCalculatorWindowTests {
        typealias Family = FamilyRollupChangeProperties
        static let account = Purchases.account("window")

        /// Records from random codes: transactions of two families, each with renewal info
        /// that is sometimes in billing retry with a grace period.
        static func records(_ codes: [Int]) -> AccountRecords {
            var transactions: [RecordedTransaction] = []
            for (index, code) in codes.enumerated() {
                var transaction = Family.transaction(index, code: code)
                if code % 3 == 0 { transaction.originalTransactionId = "g" }
                transactions.append(transaction)
            }
            var renewals: [FamilyKey: RenewalRow] = [:]
            for (offset, original) in ["f", "g"].enumerated() {
                let code = codes.dropFirst(offset).first ?? 0
                guard var renewal = Family.renewal(code) else { continue }
                renewal.key = FamilyKey(environment: .production, originalTransactionId: original)
                renewal.isInBillingRetryPeriod = code % 5 < 3
                renewal.gracePeriodExpiresDate = code % 2 == 0 ? Family.t0.addingTimeInterval(Double(code % 400) * Family.day) : nil
                renewals[renewal.key] = renewal
            }
            return AccountRecords(transactions: transactions, renewals: renewals)
        }

        static func holdings(_ records: AccountRecords, at date: Date) -> Entitlements {
            var holdings = EntitlementCalculator.entitlements(for: account, records: records, at: date)
            holdings.date = .distantPast
            return holdings
        }

        @Test("random records and instants: the holdings hold over the span, and differ at its end only when it ends")
        func holdingsHoldOverTheSpan() async {
            let codes = Gen.int(in: 0...999_999).array(of: 0...16)
            await propertyCheck(count: 600, input: codes, Gen.int(in: -30...800), Gen.int(in: 0...1_000)) { codes, startDay, fraction in
                let records = Self.records(codes)
                let start = Family.t0.addingTimeInterval(Double(startDay) * Family.day)
                let derived = Self.holdings(records, at: start)
                let end = EntitlementCalculator.nextChange(after: start, records: records)
                // Any instant inside the span: the start, a point in it, the last millisecond.
                let span = (end ?? start.addingTimeInterval(3_650 * Family.day)).timeIntervalSince(start)
                for instant in [start, start.addingTimeInterval(span * Double(fraction) / 1_001), start.addingTimeInterval(span - 0.001)] {
                    #expect(Self.holdings(records, at: instant) == derived, "codes \(codes), start day \(startDay), instant \(instant)")
                }
                // Every stored date the calculation compares lies outside the open span.
                let compared = records.transactions.compactMap(\.expiresDate) + records.renewals.values.compactMap(\.gracePeriodExpiresDate)
                let inside = compared.filter { date in date > start && (end.map { date < $0 } ?? true) }
                #expect(inside.isEmpty, "codes \(codes), start day \(startDay)")
            }
        }

        @Test("a subscription's expiry and a grace period's end each end the span")
        func expiryAndGraceEndTheSpan() {
            // Code 66: a weekly subscription of family "f", neither revoked nor upgraded.
            var records = AccountRecords(transactions: [Family.transaction(0, code: 66)])
            let expires = records.transactions.compactMap(\.expiresDate).first
            #expect(expires != nil)
            guard let expires else { return }
            let before = expires.addingTimeInterval(-60)
            #expect(EntitlementCalculator.nextChange(after: before, records: records) == expires)
            #expect(Self.holdings(records, at: before) != Self.holdings(records, at: expires))
            let grace = expires.addingTimeInterval(16 * Family.day)
            records.renewals = [
                Family.family: RenewalRow(
                    key: Family.family, productId: "pro.monthly", autoRenewProductId: "pro.monthly", willAutoRenew: true,
                    expirationIntent: nil, isInBillingRetryPeriod: true, gracePeriodExpiresDate: grace, renewalDate: nil, observedAt: expires
                )
            ]
            #expect(EntitlementCalculator.nextChange(after: expires, records: records) == grace)
            #expect(Self.holdings(records, at: expires) != Self.holdings(records, at: grace))
            #expect(EntitlementCalculator.nextChange(after: grace, records: records) == nil)
        }
    }
}

import Foundation
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Money facts (issue 29 item 1, schema 14): every transaction keeps the price, currency,
    /// storefront and offer its signed data states; a receipt's stay unknown until a signed
    /// observation or the backfill fills them, and are never erased.
    @Suite("Ledger contract: money facts")
    struct Money {
        let alice = Purchases.account("alice")

        static let trial = MoneyFacts(
            price: 0, currency: "USD", storefront: "USA", offerType: 1, offerPeriod: "P1W", offerDiscountType: "FREE_TRIAL",
            transactionReason: "PURCHASE"
        )
        static let paid = MoneyFacts(price: 9990, currency: "USD", storefront: "USA", transactionReason: "RENEWAL")
        static let euro = MoneyFacts(price: 10_990, currency: "EUR", storefront: "DEU", transactionReason: "PURCHASE")

        @Test("a signed transaction's money facts are stored and read back; the entitlement states its period type", arguments: LedgerBackend.all)
        func storesFacts(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof(Purchases.period("t1", original: "t1", start: 0, days: 7, money: Self.trial)), for: alice)
                let stored = try #require(try await ledger.transaction("t1", in: .production))
                #expect(stored.money == Self.trial)
                #expect(stored.periodType == .trial)
                let held = try await ledger.entitlements(for: alice, at: Purchases.date(1))
                #expect(held.subscriptions.first?.periodType == .trial)
                let catalog = ProductCatalog(products: [:], entitlements: ["pro": EntitlementDefinition(products: ["pro.monthly"])])
                let entitlement = EntitlementResolver.resolve("pro", holdings: held, catalog: catalog, at: Purchases.date(1))
                #expect(entitlement?.periodType == .trial)
                #expect(entitlement?.source?.periodType == .trial)

                try await ledger.record(Purchases.proof(Purchases.period("t2", original: "t1", start: 7, money: Self.paid)), for: alice)
                let renewed = try await ledger.entitlements(for: alice, at: Purchases.date(8))
                #expect(renewed.subscriptions.first?.periodType == .normal)
                #expect(try await ledger.transaction("t2", in: .production)?.money?.price == 9990)
            }
        }

        @Test("a receipt's transaction has unknown money facts; a signed observation fills them and a later receipt keeps them", arguments: LedgerBackend.all)
        func receiptThenSigned(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.transaction(
                    "r1", original: "r1", product: "pro.monthly", type: nil, purchased: Purchases.date(0), expires: Purchases.date(30),
                    signed: Purchases.date(0), source: .appReceipt
                )], kind: .appReceipt), for: alice)
                #expect(try await ledger.transaction("r1", in: .production)?.money == nil)
                #expect(try await ledger.entitlements(for: alice, at: Purchases.date(1)).subscriptions.first?.periodType == nil)

                let signed = Purchases.period("r1", original: "r1", start: 0, signed: Purchases.date(2), money: Self.euro)
                let outcome = try await ledger.record(Purchases.proof(signed), for: alice)
                #expect(outcome.updatedTransactionIds == ["r1"])
                #expect(try await ledger.transaction("r1", in: .production)?.money == Self.euro)

                // A later receipt (newer signing date) changes nothing it does not state.
                try await ledger.record(Purchases.proof([Purchases.transaction(
                    "r1", original: "r1", product: "pro.monthly", type: nil, purchased: Purchases.date(0), expires: Purchases.date(30),
                    signed: Purchases.date(3), source: .appReceipt
                )], kind: .appReceipt), for: alice)
                #expect(try await ledger.transaction("r1", in: .production)?.money == Self.euro)
            }
        }

        @Test("fillMoneyFacts fills unknown facts once, never replaces known ones, and refuses bad facts", arguments: LedgerBackend.all)
        func fill(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                try await ledger.record(Purchases.proof([Purchases.nonConsumable("n1")], kind: .appReceipt), for: alice)
                try await ledger.record(Purchases.proof(Purchases.period("s1", original: "s1", start: 0, money: Self.paid)), for: alice)
                #expect(try await ledger.fillMoneyFacts(Self.euro, of: "n1", in: .production))
                #expect(try await ledger.transaction("n1", in: .production)?.money == Self.euro)
                #expect(try await ledger.fillMoneyFacts(Self.paid, of: "n1", in: .production) == false)
                #expect(try await ledger.fillMoneyFacts(Self.euro, of: "s1", in: .production) == false)
                #expect(try await ledger.transaction("s1", in: .production)?.money == Self.paid)
                #expect(try await ledger.fillMoneyFacts(Self.euro, of: "unknown", in: .production) == false)
                await expectLedgerError(.invalidArgument) {
                    try await ledger.fillMoneyFacts(MoneyFacts(price: -1, currency: "USD"), of: "n1", in: .production)
                }
                await expectLedgerError(.invalidArgument) {
                    try await ledger.fillMoneyFacts(MoneyFacts(price: 1, currency: ""), of: "n1", in: .production)
                }
                await expectLedgerError(.invalidArgument) {
                    try await ledger.fillMoneyFacts(MoneyFacts(price: 1, currency: String(repeating: "X", count: 300)), of: "n1", in: .production)
                }
            }
        }

        @Test("a proof with a negative price or an empty currency is refused, nothing written", arguments: LedgerBackend.all)
        func refusesBadFacts(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                await expectLedgerError(.invalidArgument) {
                    try await ledger.record(Purchases.proof(Purchases.period("b1", original: "b1", start: 0, money: MoneyFacts(price: -5, currency: "USD"))), for: alice)
                }
                await expectLedgerError(.invalidArgument) {
                    try await ledger.record(Purchases.proof(Purchases.period("b2", original: "b2", start: 0, money: MoneyFacts(price: 5, currency: ""))), for: alice)
                }
                #expect(try await ledger.transaction("b1", in: .production) == nil)
                #expect(try await ledger.transactions(after: nil, limit: 10).isEmpty)
            }
        }

        @Test("transactions(after:limit:) reads every transaction once, page by page, and refuses a bad page size", arguments: LedgerBackend.all)
        func scan(backend: LedgerBackend) async throws {
            try await backend.withLedger { ledger async throws in
                var expected: Set<String> = []
                for index in 0..<23 {
                    let environment: AppStoreEnvironment = index % 3 == 0 ? .sandbox : .production
                    let id = "c\(index)"
                    try await ledger.record(Purchases.proof([Purchases.consumable(id, environment: environment)], environment: environment), for: alice)
                    expected.insert("\(environment.rawValue)/\(id)")
                }
                var seen: [String] = []
                var cursor: TransactionCursor?
                while true {
                    let page = try await ledger.transactions(after: cursor, limit: 5)
                    seen += page.map { "\($0.environment.rawValue)/\($0.transactionId)" }
                    guard page.count == 5, let last = page.last else { break }
                    cursor = TransactionCursor(last)
                }
                #expect(seen.count == 23)
                #expect(Set(seen) == expected)
                await expectLedgerError(.invalidArgument) { try await ledger.transactions(after: nil, limit: 0) }
                await expectLedgerError(.invalidArgument) { try await ledger.transactions(after: nil, limit: 10_001) }
            }
        }
    }
}

@Suite("Period types from Apple's offer fields")
struct PeriodTypeTests {
    static let cases: [(Int?, String?, Int64?, PeriodType)] = [
        (nil, nil, 9990, .normal),
        (1, "FREE_TRIAL", 0, .trial),
        (1, nil, 0, .trial),
        (1, "PAY_AS_YOU_GO", 1990, .introductory),
        (1, "PAY_UP_FRONT", 4990, .introductory),
        (1, nil, 1990, .introductory),
        (2, "PAY_AS_YOU_GO", 1990, .promotional),
        (2, "FREE_TRIAL", 0, .promotional),
        (3, "FREE_TRIAL", 0, .promotional),
        (4, "PAY_UP_FRONT", 990, .promotional),
        (9, nil, 990, .promotional),
    ]

    @Test("offerType and offerDiscountType decide the period type", arguments: cases)
    func periodType(offerType: Int?, discount: String?, price: Int64?, expected: PeriodType) {
        #expect(PeriodType(money: MoneyFacts(price: price, currency: "USD", offerType: offerType, offerDiscountType: discount)) == expected)
    }
}

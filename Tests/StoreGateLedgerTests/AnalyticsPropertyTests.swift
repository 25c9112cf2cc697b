import Foundation
import PropertyBased
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// Issue 29: the rollups kept incrementally, in each change's transaction, equal a full
    /// recomputation from the raw transactions after any story — purchases, renewals, trials,
    /// upgrades, refunds and their reversals, renewal infos, filled money facts, families moved
    /// between accounts by support — on every backend.
    @Suite("Analytics: incremental rollups equal a rebuild")
    struct AnalyticsProperties {
        static let alice = Purchases.account("alice")
        static let bob = Purchases.account("bob")
        static let day: Double = 86_400

        static func at(_ days: Double) -> Date { Date(timeIntervalSince1970: 1_767_268_800 + days * day) }

        static let variants: [MoneyFacts?] = [
            nil,
            MoneyFacts(price: 0, currency: "USD", storefront: "USA", offerType: 1, offerDiscountType: "FREE_TRIAL", transactionReason: "PURCHASE"),
            MoneyFacts(price: 1990, currency: "EUR", storefront: "DEU", offerType: 1, offerDiscountType: "PAY_AS_YOU_GO", transactionReason: "PURCHASE"),
            MoneyFacts(price: 9990, currency: "USD", storefront: "USA", transactionReason: "RENEWAL"),
            MoneyFacts(price: 10_990, currency: "EUR", storefront: "DEU", transactionReason: "PURCHASE"),
            MoneyFacts(price: 4990, currency: "JPY", storefront: "JPN", offerType: 2, offerIdentifier: "winter", transactionReason: "RENEWAL"),
        ]

        /// Period `index` of family `family`, in the variant `code` picks.
        static func period(family: Int, index: Int, code: Int, revoked: Bool? = nil) -> VerifiedTransaction {
            let start = Double(index * 30 + (family == 1 && index == 2 ? 10 : 0))
            let money = variants[code % variants.count]
            let isRevoked = revoked ?? ((code / 24) % 5 == 0)
            return Purchases.transaction(
                "f\(family)-\(index)", original: "f\(family)", product: index == 2 ? "pro.yearly" : "pro.monthly",
                type: money == nil ? nil : .autoRenewable, purchased: at(start), expires: at(start + (index == 2 ? 365 : 30)),
                revoked: isRevoked ? at(start + 3) : nil, upgraded: (code / 6) % 4 == 0, group: money == nil ? nil : "pro",
                signed: at(start + Double((code / 120) % 3)), source: money == nil ? .appReceipt : .signedTransaction, money: money
            )
        }

        static func renewal(family: Int, code: Int) -> VerifiedRenewalInfo {
            VerifiedRenewalInfo(
                environment: .production, originalTransactionId: "f\(family)", productId: "pro.monthly", autoRenewProductId: "pro.monthly",
                willAutoRenew: code % 2 == 0, expirationIntent: [nil, 1, 2][code % 3], isInBillingRetryPeriod: code % 5 == 0,
                gracePeriodExpiresDate: nil, renewalDate: nil, signedDate: at(Double(code % 200))
            )
        }

        enum Operation {
            case record(VerifiedTransaction)
            case notify(VerifiedNotification)
            case fill(String, MoneyFacts)
            /// Support moves family `f<n>` to its other account (alice ⇄ bob).
            case transfer(Int, Date)

            init(_ code: Int) {
                let rest = code / 5
                let family = rest % 3
                let index = (rest / 3) % 4
                let variant = rest / 12
                switch code % 5 {
                case 0, 1:
                    self = .record(AnalyticsProperties.period(family: family, index: index, code: variant))
                case 2:
                    let transaction = AnalyticsProperties.period(family: family, index: index, code: variant, revoked: variant % 2 == 0)
                    self = .notify(Purchases.notification(
                        "n-\(code)", type: variant % 2 == 0 ? "REFUND" : "REFUND_REVERSED", signed: at(Double(index * 30 + 5 + variant % 7)),
                        transaction: transaction
                    ))
                case 3:
                    self = .notify(Purchases.notification(
                        "n-\(code)", type: "DID_CHANGE_RENEWAL_STATUS", signed: at(Double(variant % 200)),
                        renewal: AnalyticsProperties.renewal(family: family, code: variant)
                    ))
                case 4 where variant % 4 == 0:
                    self = .transfer(family, at(Double(index * 30 + 2)))
                default:
                    let money = AnalyticsProperties.variants[1 + variant % (AnalyticsProperties.variants.count - 1)] ?? MoneyFacts()
                    self = .fill("f\(family)-\(index)", money)
                }
            }
        }

        static func checks(for backend: LedgerBackend) -> Int {
            switch backend.kind {
            case .memory: 150
            case .sqlite: 40
            case .postgres: 8
            }
        }

        @Test("after any story the incremental rollups equal a rebuild from the transactions", arguments: LedgerBackend.all)
        func incrementalEqualsRebuild(backend: LedgerBackend) async {
            await propertyCheck(count: Self.checks(for: backend), input: Gen.int(in: 0...99_999).array(of: 1...25)) { codes in
                try await backend.withLedger { ledger async throws in
                    var owners: [String: AccountID] = [:]
                    for operation in codes.map(Operation.init) {
                        switch operation {
                        case .record(let transaction):
                            // Recorded for the family's owner: another account would be refused.
                            let owner = owners[transaction.originalTransactionId] ?? Self.alice
                            try await ledger.record(Purchases.proof([transaction], kind: transaction.source), for: owner)
                            owners[transaction.originalTransactionId] = owner
                        case .notify(let notification):
                            try await ledger.apply(notification)
                        case .fill(let id, let money):
                            try await ledger.fillMoneyFacts(money, of: id, in: .production)
                        case .transfer(let family, let date):
                            // Only a family a recording gave an owner can move.
                            let id = "f\(family)"
                            guard let owner = owners[id] else { continue }
                            let target = owner == Self.bob ? Self.alice : Self.bob
                            let moved = try await ledger.transfer(TransferRequest(
                                environment: .production, originalTransactionId: id, account: target, reason: "story",
                                transferredBy: "test", date: date))
                            #expect(moved.isMoved, "codes \(codes)")
                            owners[id] = target
                        }
                    }
                    let incremental = try await AnalyticsStory.allRollups(ledger)
                    try await ledger.rebuildRollups()
                    let rebuilt = try await AnalyticsStory.allRollups(ledger)
                    #expect(incremental == rebuilt, "codes \(codes)")
                }
            }
        }
    }
}

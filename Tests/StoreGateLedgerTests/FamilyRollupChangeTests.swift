import Foundation
import PropertyBased
import StoreGateCore
import StoreGateLedger
import Testing

extension LedgerTests {
    /// The write path computes a family's rollup change from what changed
    /// (``FamilyRollup/change(from:renewal:to:renewal:)``); the reference is the whole-family
    /// computation it replaced: both contributions in full, then their difference. Random
    /// families — periods that follow on or lapse, trials, upgrades, refunds, renewals, every
    /// product type — changed at random (a transaction added, removed, moved, revoked, priced,
    /// re-observed; renewal info changed) give the same change both ways.
    @Suite("Analytics: a family's incremental rollup change equals the whole-family difference")
    struct FamilyRollupChangeProperties {
        static let day: Double = 86_400
        static let t0 = Date(timeIntervalSince1970: 1_767_268_800)
        static let family = FamilyKey(environment: .production, originalTransactionId: "f")

        /// The analytics story's money facts, and two more: a storefront without a price, a
        /// price without a reason.
        static let variants: [MoneyFacts?] = AnalyticsProperties.variants + [
            MoneyFacts(price: nil, currency: nil, storefront: "USA"),
            MoneyFacts(price: 9990, currency: "USD", storefront: "USA"),
        ]

        /// A transaction of the family from one random code: mostly monthly periods that follow
        /// on (or start a little after, or long after) the previous slot, some yearly ones,
        /// some other product types.
        static func transaction(_ id: Int, code: Int) -> RecordedTransaction {
            let slot = Double(id) * 30
            let offsets: [Double] = [0, 0, 0, 1.0 / 48, 0.5, 3, 45, 90, -2]
            let purchased = t0.addingTimeInterval((slot + offsets[code % offsets.count]) * day)
            let lengths: [Double] = [30, 30, 30, 7, 365, 0.01]
            let types: [ProductType] = [.autoRenewable, .autoRenewable, .autoRenewable, .autoRenewable, .consumable, .nonConsumable]
            let type = types[(code / 9) % types.count]
            let expires = type == .autoRenewable && (code / 54) % 11 != 0
                ? purchased.addingTimeInterval(lengths[(code / 7) % lengths.count] * day) : nil
            let money = variants[(code / 13) % variants.count]
            return RecordedTransaction(
                environment: .production, transactionId: "t\(id)", originalTransactionId: family.originalTransactionId, account: nil,
                bundleId: "com.example", productId: (code / 5) % 4 == 0 ? "pro.yearly" : "pro.monthly", productType: type,
                subscriptionGroup: type == .autoRenewable ? "pro" : "pro.monthly", quantity: (code / 17) % 6 == 0 ? 2 : 1,
                purchaseDate: purchased, originalPurchaseDate: nil, expiresDate: expires,
                revocationDate: (code / 3) % 6 == 0 ? purchased.addingTimeInterval(3 * day) : nil, revocationReason: nil,
                isUpgraded: (code / 11) % 5 == 0, webOrderLineItemId: nil, appAccountToken: nil, observedAt: purchased,
                source: .signedTransaction, proofDigest: nil, money: money
            )
        }

        static func renewal(_ code: Int) -> RenewalRow? {
            guard code % 4 != 0 else { return nil }
            return RenewalRow(
                key: family, productId: "pro.monthly", autoRenewProductId: "pro.monthly", willAutoRenew: code % 2 == 0,
                expirationIntent: [nil, 1, 2][(code / 2) % 3], isInBillingRetryPeriod: (code / 6) % 4 == 0, gracePeriodExpiresDate: nil,
                renewalDate: nil, observedAt: t0.addingTimeInterval(Double(code))
            )
        }

        /// One change of the family, as `code` picks it.
        static func mutate(_ transactions: inout [RecordedTransaction], _ renewal: inout RenewalRow?, code: Int, next: inout Int) {
            let index = transactions.isEmpty ? 0 : (code / 10) % transactions.count
            switch code % 10 {
            case 0, 1, 2:
                transactions.append(transaction(next, code: code / 10))
                next += 1
            case 3 where !transactions.isEmpty:
                transactions[index].revocationDate = transactions[index].revocationDate == nil
                    ? transactions[index].purchaseDate.addingTimeInterval(Double(code % 40) * day) : nil
            case 4 where !transactions.isEmpty:
                transactions[index].money = variants[(code / 7) % variants.count]
            case 5 where !transactions.isEmpty:
                transactions[index].isUpgraded.toggle()
            case 6 where !transactions.isEmpty:
                // Re-observed: nothing the rollups read changes.
                transactions[index].observedAt = transactions[index].observedAt.addingTimeInterval(60)
                transactions[index].account = Purchases.account("someone")
            case 7 where !transactions.isEmpty:
                transactions[index].purchaseDate = transactions[index].purchaseDate.addingTimeInterval(Double(code % 50 - 25) * day)
            case 8 where !transactions.isEmpty:
                transactions.remove(at: index)
            default:
                renewal = Self.renewal(code / 10)
            }
        }

        static func reference(_ before: [RecordedTransaction], _ old: RenewalRow?, _ after: [RecordedTransaction], _ new: RenewalRow?) -> [Rollup] {
            FamilyRollup.delta(from: FamilyRollup.contributions(before, renewal: old), to: FamilyRollup.contributions(after, renewal: new))
        }

        @Test("random families and changes: the incremental change equals the whole-family difference")
        func changeEqualsReference() async {
            let codes = Gen.int(in: 0...999_999).array(of: 0...28)
            await propertyCheck(count: 1500, input: codes, Gen.int(in: 1...4)) { codes, changes in
                var before: [RecordedTransaction] = []
                var next = 0
                let renewal = Self.renewal(codes.first ?? 0)
                for code in codes.dropLast(changes) {
                    before.append(Self.transaction(next, code: code))
                    next += 1
                }
                var after = before
                var newRenewal = renewal
                for code in codes.suffix(changes) { Self.mutate(&after, &newRenewal, code: code, next: &next) }
                let expected = Self.reference(before, renewal, after, newRenewal)
                #expect(FamilyRollup.change(from: before, renewal: renewal, to: after, renewal: newRenewal) == expected, "codes \(codes), changes \(changes)")
                // Told which transactions the write changed (as the planner does), it compares
                // only those fact by fact, and comes to the same.
                let changed = after.filter { transaction in before.first { $0.transactionId == transaction.transactionId } != transaction }.map(\.transactionId)
                #expect(
                    FamilyRollup.change(from: before, renewal: renewal, to: after, renewal: newRenewal, changed: changed) == expected,
                    "codes \(codes), changes \(changes), changed \(changed)"
                )
                // The transactions' order as loaded does not matter.
                let rotated = Array(after.suffix(changes) + after.dropLast(changes))
                #expect(
                    FamilyRollup.change(from: before.reversed(), renewal: renewal, to: rotated, renewal: newRenewal) == expected,
                    "codes \(codes), changes \(changes)"
                )
            }
        }

        @Test("a family that did not change, or changed only in facts rollups do not read, changes nothing")
        func unchangedFactsChangeNothing() {
            var family = (0..<24).map { Self.transaction($0, code: 7 * $0) }
            let renewal = Self.renewal(3)
            #expect(FamilyRollup.change(from: family, renewal: renewal, to: family, renewal: renewal).isEmpty)
            let before = family
            for index in family.indices {
                family[index].observedAt = family[index].observedAt.addingTimeInterval(3600)
                family[index].proofDigest = nil
                family[index].webOrderLineItemId = "w\(index)"
            }
            var sameVerdict = renewal
            sameVerdict?.observedAt = Self.t0.addingTimeInterval(99)
            sameVerdict?.renewalDate = Self.t0
            #expect(FamilyRollup.change(from: before, renewal: renewal, to: family, renewal: sameVerdict).isEmpty)
            // And a new period at the end of a long family moves what the reference moves.
            var renewed = family
            renewed.append(Self.transaction(24, code: 0))
            #expect(
                FamilyRollup.change(from: family, renewal: renewal, to: renewed, renewal: renewal)
                    == Self.reference(family, renewal, renewed, renewal)
            )
            #expect(!FamilyRollup.change(from: family, renewal: renewal, to: renewed, renewal: renewal).isEmpty)
        }
    }
}
